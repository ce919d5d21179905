package orchestrator

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"workbench/models"
)

// A preemption outlives a restart of the portal: the victim told to yield
// before the restart is stopped by the new process when its grace ends (not
// before), and the launch that waited for it starts. The stop time is the
// record's preempt_at, not a timer of the process that chose the victim.
func TestMemPreemptionSurvivesARestart(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	victims := r.fillWithSpots(t, r.user(t, "dave"), false)
	want := r.launch(t, r.user(t, "eve"), "interactive", LaunchRequest{Queue: true})
	victim, err := r.store.WorkbenchByID(ctx, victims[6].ID)
	if err != nil || victim.PreemptAt == nil || want.State != models.StateQueued {
		t.Fatalf("before the restart: victim %+v (%v), launch %s", victim, err, want.State)
	}

	// The portal restarts: a new manager on the same database and engine.
	r.m.Wait()
	m2 := NewManager(r.store, r.m.pool, r.rt, "memtest", r.m.opt, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(m2.Wait)
	m2.SetClock(r.m.now)
	if err := m2.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	r.advance(victim.PreemptAt.Sub(r.m.now()) - time.Second)
	if err := m2.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if w, _ := r.store.WorkbenchByID(ctx, victim.ID); w.State != models.StateRunning || w.PreemptAt == nil {
		t.Fatalf("a second before the grace ends, after the restart: %s, preempt at %v", w.State, w.PreemptAt)
	}
	r.advance(time.Second)
	if err := m2.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, want.ID, models.StateRunning)
	if w, _ := r.store.WorkbenchByID(ctx, victim.ID); w.State != models.StatePreempted {
		t.Fatalf("victim after its grace: %s (%s)", w.State, w.Reason)
	}
}

// cutShortPreemption sets up a preemption the portal was killed in: dave's
// seven spots fill the pool (the last with autoResume), eve's launch waits
// and the last spot was told to yield. When its grace ended the process
// began that spot's stop and died (left stopping with the preemption's
// reason); dave was meanwhile stopping another spot himself during its
// notice (own, left stopping without that reason). next is the next
// process's manager, not yet reconciled.
func cutShortPreemption(t *testing.T, autoResume bool) (r *queueRig, victim, own *models.Workbench, next *Manager) {
	t.Helper()
	r = newQueueRig(t)
	ctx := context.Background()
	victims := r.fillWithSpots(t, r.user(t, "dave"), autoResume)
	want := r.launch(t, r.user(t, "eve"), "interactive", LaunchRequest{Queue: true})
	victim, err := r.store.WorkbenchByID(ctx, victims[6].ID)
	if err != nil || victim.PreemptAt == nil || victim.AutoResume != autoResume || want.State != models.StateQueued {
		t.Fatalf("before: victim %+v (%v), launch %s", victim, err, want.State)
	}
	r.m.Wait()
	r.advance(victim.PreemptAt.Sub(r.m.now()) + time.Second)
	if err := r.store.SetWorkbenchState(ctx, victim.ID, models.StateStopping, 10, preemptReason(autoResume, ""), nil); err != nil {
		t.Fatal(err)
	}
	own = victims[5]
	if err := r.store.SetWorkbenchState(ctx, own.ID, models.StateStopping, 10, "", map[string]any{"preempt_at": victim.PreemptAt}); err != nil {
		t.Fatal(err)
	}
	next = NewManager(r.store, r.m.pool, r.rt, "memtest", r.m.opt, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(next.Wait)
	next.SetClock(r.m.now)
	return r, victim, own, next
}

// A preemption the portal was killed in the middle of (the victim left
// stopping) is finished by the next process as a preemption: the
// auto-resume victim goes back in the queue, the other ends preempted —
// not "stopped", which would drop the resume its owner asked for.
func TestMemPreemptionCutShortIsFinishedAsOne(t *testing.T) {
	t.Parallel()
	r, victim, own, m2 := cutShortPreemption(t, true)
	ctx := context.Background()
	if err := m2.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := r.store.WorkbenchByID(ctx, victim.ID)
	// Back in the queue, where the GPUs freed meanwhile may already have
	// placed it again.
	if err != nil || got.State == models.StateStopped || got.State == models.StatePreempted || got.State == models.StateFailed {
		t.Fatalf("the auto-resume victim after the restart: %s (%s), %v; want back in the queue", got.State, got.Reason, err)
	}
	if got, _ := r.store.WorkbenchByID(ctx, own.ID); got.State != models.StateStopped {
		t.Errorf("the spot its owner was stopping: %s (%s), want stopped", got.State, got.Reason)
	}
}

// The queue's due preemptions leave a stop already under way alone: the
// spot its owner was stopping during the notice, cut short by a crash, is
// not turned into a preemption by a drain that runs before reconciliation
// reaches it (the next process drains as soon as a stop frees GPUs).
func TestMemOwnersStopCutShortIsNotPreemptedByTheQueue(t *testing.T) {
	t.Parallel()
	r, victim, own, m2 := cutShortPreemption(t, false)
	ctx := context.Background()
	if err := m2.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.store.WorkbenchByID(ctx, own.ID); got.State != models.StateStopping {
		t.Fatalf("after a drain, the spot its owner was stopping: %s (%s), want still stopping", got.State, got.Reason)
	}
	if got, _ := r.store.WorkbenchByID(ctx, victim.ID); got.State != models.StatePreempted {
		t.Fatalf("after a drain, the spot whose preemption was cut short: %s (%s), want preempted", got.State, got.Reason)
	}
	if err := m2.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.store.WorkbenchByID(ctx, own.ID); got.State != models.StateStopped {
		t.Errorf("after reconciliation, the spot its owner was stopping: %s (%s), want stopped", got.State, got.Reason)
	}
}
