package orchestrator

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"workbench/models"
)

// Lifecycle tests on the in-memory engine (memruntime): no Docker, no
// sleeps; time moves only when a test moves its clock.

// testClock is a settable time shared by the manager and the engine.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func newTestClock(at time.Time) *testClock { return &testClock{now: at.UTC()} }

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Set(at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = at.UTC()
}

func (r *memRig) record(t *testing.T) *models.Workbench {
	t.Helper()
	wb, err := r.store.WorkbenchByID(context.Background(), r.wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	return wb
}

// A stop asked by the owner: the engine's container exits, and the
// workbench ends stopped with its GPU free and its meter closed.
func TestMemStopStopsTheContainer(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	clock := newTestClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	r.rt.SetClock(clock.Now)
	if err := r.m.Stop(context.Background(), r.wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	r.assertStopped(t)
	c, _ := r.rt.Container("c-" + r.wb.ID)
	if c.State != "exited" || !c.FinishedAt.Equal(clock.Now()) {
		t.Errorf("container after the stop: state %q, finished %v, want exited at %v", c.State, c.FinishedAt, clock.Now())
	}
	if r.rt.Calls("Stop") != 1 {
		t.Errorf("engine Stop called %d times, want 1", r.rt.Calls("Stop"))
	}
}

// A container removed behind the portal's back: reconciliation closes the
// workbench as disappeared.
func TestMemReconcileClosesAVanishedContainer(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	r.rt.Vanish("c-"+r.wb.ID, false)
	if err := r.m.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.assertStopped(t)
	if wb := r.record(t); !strings.Contains(wb.Reason, "disappeared") {
		t.Errorf("reason %q, want it to say the container disappeared", wb.Reason)
	}
}

// A container killed for memory: reconciliation closes the workbench at
// the engine's exit time and says why.
func TestMemReconcileClosesAnOOMKilledContainerAtItsExitTime(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	died := time.Now().UTC().Add(-10 * time.Second).Truncate(time.Second)
	r.rt.SetClock(func() time.Time { return died })
	if err := r.rt.Exit("c-"+r.wb.ID, 137, true); err != nil {
		t.Fatal(err)
	}
	if err := r.m.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.assertStopped(t)
	wb := r.record(t)
	if !strings.Contains(wb.Reason, "out of memory") {
		t.Errorf("reason %q, want it to say out of memory", wb.Reason)
	}
	if wb.StoppedAt == nil || !wb.StoppedAt.Equal(died) {
		t.Errorf("stopped at %v, want the exit time %v", wb.StoppedAt, died)
	}
}

// The engine's die event alone (no periodic reconciliation) closes a
// workbench whose container crashed.
func TestMemDieEventClosesACrashedWorkbench(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.m.watchEvents(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	// Exit only once the watcher has subscribed, or the event is missed.
	waitFor(t, func() bool { return r.rt.Calls("Events") > 0 })
	if err := r.rt.Exit("c-"+r.wb.ID, 1, false); err != nil {
		t.Fatal(err)
	}
	r.assertStopped(t)
	if wb := r.record(t); !strings.Contains(wb.Reason, "code 1") {
		t.Errorf("reason %q, want the exit code", wb.Reason)
	}
}

// The culler on the manager's clock: not before the idle timeout, at it.
func TestMemCullStopsAnIdleWorkbenchAtItsTimeout(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	started := *r.wb.StartedAt
	idle := time.Duration(r.wb.IdleTimeoutS) * time.Second
	clock := newTestClock(started.Add(idle - time.Second))
	r.m.SetClock(clock.Now)
	ctx := context.Background()
	r.m.Cull(ctx)
	if wb := r.record(t); wb.State != models.StateRunning {
		t.Fatalf("culled a second before the idle timeout: %s (%s)", wb.State, wb.Reason)
	}
	clock.Set(started.Add(idle))
	r.m.Cull(ctx)
	r.assertStopped(t)
	wb := r.record(t)
	if !strings.Contains(wb.Reason, "idle timeout") {
		t.Errorf("reason %q, want the idle timeout", wb.Reason)
	}
	// Its owner, who was not looking, is told why, with a link.
	ns, err := r.store.ListNotifications(ctx, wb.OwnerID, 10)
	if err != nil || len(ns) != 1 || ns[0].Message != "Workbench "+wb.Name+": "+wb.Reason || ns[0].Link != "/workbenches/"+wb.ID {
		t.Fatalf("owner's notifications %+v (%v)", ns, err)
	}
}

// The owner stops a workbench while a cull pass is deciding about it (here:
// while it asks Jupyter for activity). The cull's stop then has nothing to
// do, and the owner, who stopped it, is not told "stopped: idle timeout".
func TestMemCullAfterTheOwnersOwnStopTellsNothing(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	ownerStopped := make(chan error, 1)
	jupyter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasSuffix(req.URL.Path, "/api/kernels") {
			ownerStopped <- r.m.Stop(ctx, r.wb.ID, "stopped by alice")
		}
		_, _ = w.Write([]byte("[]"))
	}))
	defer jupyter.Close()
	if err := r.store.SetWorkbenchState(ctx, r.wb.ID, models.StateRunning, 100, "", map[string]any{"endpoint": jupyter.Listener.Addr().String()}); err != nil {
		t.Fatal(err)
	}
	clock := newTestClock(r.wb.StartedAt.Add(time.Duration(r.wb.IdleTimeoutS) * time.Second))
	r.m.SetClock(clock.Now)
	r.m.Cull(ctx)
	if err := <-ownerStopped; err != nil {
		t.Fatalf("the owner's stop: %v", err)
	}
	r.assertStopped(t)
	if wb := r.record(t); wb.Reason != "stopped by alice" {
		t.Errorf("reason %q, want the owner's", wb.Reason)
	}
	if ns, err := r.store.ListNotifications(ctx, r.wb.OwnerID, 10); err != nil || len(ns) != 0 {
		t.Fatalf("the owner, who stopped it, was told %+v (%v)", ns, err)
	}
}

// A kernel busy past the idle timeout keeps the workbench running, and the
// deadline its page shows moves on with it instead of lying in the past.
func TestMemCullBusyKernelMovesTheIdleDeadline(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	jupyter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasSuffix(req.URL.Path, "/api/kernels") {
			_, _ = w.Write([]byte(`[{"execution_state":"busy","last_activity":"` + r.wb.StartedAt.UTC().Format(time.RFC3339) + `"}]`))
			return
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	defer jupyter.Close()
	if err := r.store.SetWorkbenchState(ctx, r.wb.ID, models.StateRunning, 100, "", map[string]any{"endpoint": jupyter.Listener.Addr().String()}); err != nil {
		t.Fatal(err)
	}
	now := r.wb.StartedAt.Add(time.Duration(r.wb.IdleTimeoutS)*time.Second + 5*time.Minute)
	clock := newTestClock(now)
	r.m.SetClock(clock.Now)
	r.m.Cull(ctx)
	wb := r.record(t)
	if wb.State != models.StateRunning {
		t.Fatalf("a workbench with a busy kernel was stopped: %s %q", wb.State, wb.Reason)
	}
	d := r.m.Deadlines(ctx, wb)
	if !d.IdleStopAt.After(now) {
		t.Fatalf("idle stop shown at %s, before now (%s), while the kernel is busy", d.IdleStopAt, now)
	}
}

// waitFor polls cond until it holds (generous bound: a busy machine).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within a minute")
		}
		time.Sleep(time.Millisecond)
	}
}

// A container that exits and is removed between the die event's inspect
// and reconciliation's own look (`docker rm -f`): the workbench closes at
// the exit time that first inspect saw, not at an estimate from the event
// history (made unavailable here) or the last heartbeat.
func TestMemReconcileKeepsTheExitSeenBeforeRemoval(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	died := time.Now().UTC().Add(-10 * time.Second).Truncate(time.Millisecond)
	r.rt.SetClock(func() time.Time { return died })
	if err := r.rt.Exit("c-"+r.wb.ID, 137, false); err != nil {
		t.Fatal(err)
	}
	seen, err := r.rt.Inspect(ctx, "c-"+r.wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	r.rt.Vanish("c-"+r.wb.ID, true)
	r.rt.Fail("LastExit", errors.New("event history unavailable"))
	r.m.reconcileWorkbench(ctx, r.record(t), seen, true)
	r.assertStopped(t)
	wb := r.record(t)
	if wb.StoppedAt == nil || !wb.StoppedAt.Equal(died) {
		t.Errorf("stopped at %v, want the exit time %v the first inspect saw", wb.StoppedAt, died)
	}
	if wb.Reason != "stopped outside the portal (by the server's operator or the engine)" {
		t.Errorf("reason %q, want it stopped outside the portal (killed: code 137)", wb.Reason)
	}
}
