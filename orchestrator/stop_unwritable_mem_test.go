package orchestrator

import (
	"context"
	"errors"
	"testing"
	"time"

	"workbench/models"
)

// The owner stops a running workbench while the portal's database cannot
// be written (its disk full, or read-only). The stop used to be refused
// with the state write's error, the container left running and its meter
// open: no stop at all (the owner's, the budget's, the culler's) while
// charges went on. The container is stopped; the answer says the stop is
// not recorded yet; once the database can be written, reconciliation
// records it with the stop's own reason, the run closed at the exit and
// the GPU free.
func TestMemStopWhileTheDatabaseCannotBeWritten(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	exit := time.Now().UTC().Add(time.Minute).Truncate(time.Second)
	r.rt.SetClock(func() time.Time { return exit })

	if err := r.store.QueryOnly(ctx, true); err != nil {
		t.Fatal(err)
	}
	err := r.m.Stop(ctx, r.wb.ID, "")
	var ure *UnrecordedStopError
	if !errors.As(err, &ure) || !models.Unwritable(err) {
		t.Fatalf("stop with a read-only database: %v, want an UnrecordedStopError", err)
	}
	if c, ok := r.rt.Container("c-" + r.wb.ID); !ok || c.Running {
		t.Fatalf("the container is still running after the stop (found %v)", ok)
	}
	// Nothing is recorded while the database refuses writes.
	if err := r.m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if wb, err := r.store.WorkbenchByID(ctx, r.wb.ID); err != nil || wb.State != models.StateRunning {
		t.Fatalf("while unwritable: %v, state %v", err, wb)
	}

	if err := r.store.QueryOnly(ctx, false); err != nil {
		t.Fatal(err)
	}
	if err := r.m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	wb, err := r.store.WorkbenchByID(ctx, r.wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if wb.State != models.StateStopped || wb.Reason != "" || len(wb.GPUs) != 0 {
		t.Fatalf("after the disk is fixed: state %s, reason %q, GPUs %v; want stopped by its owner, GPU free", wb.State, wb.Reason, wb.GPUs)
	}
	ivs, err := r.store.IntervalsOf(ctx, r.wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ivs) != 1 || ivs[0].EndedAt == nil || !ivs[0].EndedAt.Equal(exit) || ivs[0].EndReason != "stopped" {
		t.Fatalf("the run: %+v, want it closed at the exit %s as stopped", ivs, exit)
	}
}

// A stop that could not be recorded is charged up to the stop, whatever
// comes after it: the cost shown meanwhile stops growing at the stop; a
// second stop (the budget's, the culler's) does not replace the owner's
// reason; and a container removed before the disk is fixed still closes
// the run at the stop, not at its last heartbeat as "the container
// disappeared".
func TestMemUnrecordedStopIsChargedToTheStop(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	exit := time.Now().UTC().Add(time.Minute).Truncate(time.Second)
	r.rt.SetClock(func() time.Time { return exit })

	if err := r.store.QueryOnly(ctx, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.store.QueryOnly(context.Background(), false) })
	var ure *UnrecordedStopError
	if err := r.m.Stop(ctx, r.wb.ID, ""); !errors.As(err, &ure) {
		t.Fatalf("stop with a read-only database: %v, want an UnrecordedStopError", err)
	}
	cost := func(at time.Time) WorkbenchCost {
		t.Helper()
		b := *r.m.billing
		b.now = func() time.Time { return at }
		wb, err := r.store.WorkbenchByID(ctx, r.wb.ID)
		if err != nil {
			t.Fatal(err)
		}
		costs, err := b.Costs(ctx, []models.Workbench{*wb}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return costs[r.wb.ID]
	}
	atStop, later := cost(exit), cost(exit.Add(2*time.Hour))
	if atStop.SoFarMicros <= 0 || later.SoFarMicros != atStop.SoFarMicros {
		t.Errorf("cost so far of a stopped workbench whose stop is not recorded: %d at the stop, %d two hours later; want it to end at the stop",
			atStop.SoFarMicros, later.SoFarMicros)
	}

	// The budget's stop, an hour later, finds it stopped already.
	r.rt.SetClock(func() time.Time { return exit.Add(time.Hour) })
	if err := r.m.Stop(ctx, r.wb.ID, "stopped: the monthly budget is spent (your files are kept)"); err != nil && !errors.As(err, &ure) {
		t.Fatalf("a second stop while the first is not recorded: %v", err)
	}
	r.rt.Vanish("c-"+r.wb.ID, true) // removed by hand before the disk is fixed

	if err := r.store.QueryOnly(ctx, false); err != nil {
		t.Fatal(err)
	}
	if err := r.m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	wb, err := r.store.WorkbenchByID(ctx, r.wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if wb.State != models.StateStopped || wb.Reason != "" || len(wb.GPUs) != 0 {
		t.Errorf("after the disk is fixed: state %s, reason %q, GPUs %v; want stopped by its owner (no reason), GPU free", wb.State, wb.Reason, wb.GPUs)
	}
	if wb.StoppedAt == nil || !wb.StoppedAt.Equal(exit) {
		t.Errorf("stopped at %v, want the stop's exit %s", wb.StoppedAt, exit)
	}
	ivs, err := r.store.IntervalsOf(ctx, r.wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ivs) != 1 || ivs[0].EndedAt == nil || !ivs[0].EndedAt.Equal(exit) || ivs[0].EndReason != "stopped" {
		t.Fatalf("the run: %+v, want it closed at the stop's exit %s as stopped", ivs, exit)
	}
}
