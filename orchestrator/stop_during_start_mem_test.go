package orchestrator

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// slowStart is an engine that takes its time to start a container: the
// start happens in the engine whether or not the caller still waits for
// the answer (as a Docker client's cancelled request does).
type slowStart struct {
	runtime.Runtime
	*gate
}

func (s *slowStart) Start(ctx context.Context, id string) error {
	done := make(chan error, 1)
	go func() {
		s.hold()
		done <- s.Runtime.Start(context.Background(), id)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// A stop while the engine is still starting the container: when the stop
// reports stopped, the container is not running (nor starts afterwards on
// GPUs given to someone else, unmetered).
func TestMemStopDuringASlowStartLeavesNothingRunning(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	slow := &slowStart{Runtime: r.rt, gate: newGate()}
	m := NewManager(r.store, r.m.pool, slow, "memtest", r.m.opt, slog.New(slog.NewTextHandler(io.Discard, nil)))
	m.SetClock(r.m.now)
	t.Cleanup(m.Wait)
	bob := r.user(t, "bob")
	wb, err := m.Launch(ctx, bob, LaunchRequest{Name: "slow", Image: "mem", Flavor: r.flavor})
	if err != nil {
		t.Fatal(err)
	}
	slow.arrived(t, "the launch reaching the container's start")
	// The engine finishes the start a moment after the stop began.
	go func() {
		for !m.isLaunching(wb.ID) || !stopping(r.store, wb.ID) {
			time.Sleep(5 * time.Millisecond)
		}
		slow.open()
	}()
	if err := m.Stop(ctx, wb.ID, ""); err != nil {
		t.Fatalf("stop: %v", err)
	}
	got, err := r.store.WorkbenchByID(ctx, wb.ID)
	if err != nil || got.State != models.StateStopped || len(got.GPUs) != 0 {
		t.Fatalf("after the stop: %+v (%v)", got, err)
	}
	if c, ok := r.rt.Container(m.containerName(wb.ID)); ok && c.Running {
		t.Fatal("the container runs after the stop reported stopped, on GPUs the stop released")
	}
}

func stopping(s *models.Store, id string) bool {
	wb, err := s.WorkbenchByID(context.Background(), id)
	return err == nil && wb.State == models.StateStopping
}

// stalledStart is an engine whose Start never reaches the container: the
// portal process dies there.
type stalledStart struct {
	runtime.Runtime
	*gate
}

func (s *stalledStart) Start(ctx context.Context, id string) error {
	s.hold()
	return errors.New("the process was killed")
}

// A Start of a stopped workbench whose container it reuses, cut short
// before the engine started the container (the portal killed), is taken
// up by the next process: the container still carries its last run's
// exit, which is not this start's failure.
func TestMemStartCutShortBeforeTheEngineStartedIsTakenUp(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	// A run by the portal (its container made by the launch pipeline, in
	// the shape a start reuses), then a stop.
	if err := r.m.Stop(ctx, r.wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, r.wb.ID, models.StateStopped)
	if err := r.m.Start(ctx, r.wb.ID, r.alice); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, r.wb.ID, models.StateRunning)
	r.advance(time.Minute)
	if err := r.m.Stop(ctx, r.wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, r.wb.ID, models.StateStopped)
	r.advance(time.Minute)
	stall := &stalledStart{Runtime: r.rt, gate: newGate()}
	first := NewManager(r.store, r.m.pool, stall, "memtest", r.m.opt, slog.New(slog.NewTextHandler(io.Discard, nil)))
	first.SetClock(r.m.now)
	t.Cleanup(func() { stall.open(); first.Wait() })
	if err := first.Start(ctx, r.wb.ID, r.alice); err != nil {
		t.Fatal(err)
	}
	stall.arrived(t, "the start reaching the engine")
	if c, ok := r.rt.Container(r.m.containerName(r.wb.ID)); !ok || c.Running || c.FinishedAt.IsZero() {
		t.Fatalf("want the reused container exited from its last run: %+v (%v)", c, ok)
	}
	// The next process.
	if err := r.m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	got := r.waitState(t, r.wb.ID, models.StateRunning, models.StateFailed)
	if got.State != models.StateRunning {
		t.Fatalf("the interrupted start ended %s: %s", got.State, got.Reason)
	}
}
