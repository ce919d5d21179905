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

// stalledStop is an engine on which the portal process dies while it
// stops a container.
type stalledStop struct {
	runtime.Runtime
	*gate
}

func (s *stalledStop) Stop(ctx context.Context, id string, grace time.Duration) error {
	s.hold()
	return errors.New("the process was killed")
}

// "Restart with GPUs" of a CPU-only run, cut short during its stop (the
// portal killed): the next process finishes the stop and starts the
// workbench with its GPUs, through the queue (it ended stopped, CPU-only,
// with no word of the restart asked for).
func TestMemRestartWithGPUsCutShortIsFinished(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	r.addCPUTwin(t)
	if err := r.m.Stop(ctx, r.wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, r.wb.ID, models.StateStopped)
	if err := r.m.StartAs(ctx, r.wb.ID, r.alice, StartOptions{CPUOnly: true}); err != nil {
		t.Fatal(err)
	}
	if wb := r.waitState(t, r.wb.ID, models.StateRunning); !wb.CPUOnly() {
		t.Fatal("the start without GPUs did not run CPU-only")
	}
	// The start's pipeline writes "running" a moment before it lets go of
	// the workbench; the one Reconcile below skips a workbench this
	// process still drives (a server's next periodic one would not), and
	// the test failed now and then under load.
	r.m.Wait()
	stall := &stalledStop{Runtime: r.rt, gate: newGate()}
	first := NewManager(r.store, r.m.pool, stall, "memtest", r.m.opt, slog.New(slog.NewTextHandler(io.Discard, nil)))
	first.SetClock(r.m.now)
	t.Cleanup(func() { stall.open(); first.Wait() })
	reqCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = first.RestartWithGPUs(reqCtx, r.wb.ID, r.alice) }()
	stall.arrived(t, "the restart reaching the container's stop")
	cancel()

	// The next process.
	if err := r.m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	got := r.waitState(t, r.wb.ID, models.StateRunning, models.StateStopped, models.StateFailed)
	if got.State != models.StateRunning || got.CPUOnly() || len(got.GPUs) != 1 {
		t.Fatalf("after the restart: %s (%s), CPU-only %v, GPUs %v; want running with its GPU", got.State, got.Reason, got.CPUOnly(), got.GPUs)
	}
}
