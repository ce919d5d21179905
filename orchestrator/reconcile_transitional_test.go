package orchestrator

import (
	"context"
	"testing"
	"time"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// gatedPull is the real engine, except that EnsureImage waits until release
// is closed (a slow pull), telling entered first.
type gatedPull struct {
	runtime.Runtime
	entered chan struct{}
	release chan struct{}
}

func (g *gatedPull) EnsureImage(ctx context.Context, ref string, progress func(int, string)) error {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	select {
	case <-g.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.Runtime.EnsureImage(ctx, ref, progress)
}

// Reconciliation leaves a launch this process is driving alone (it is
// pulling, slowly), and takes up one nothing drives: a workbench left
// "pulling" with no pipeline behind it (a request or process that died)
// starts over with the GPUs it holds and runs to its end, as an accepted
// launch must (SPEC §3); it was failed.
func TestReconcileLeavesDrivenLaunchesAndFinishesAbandonedOnes(t *testing.T) {
	gate := &gatedPull{entered: make(chan struct{}, 1), release: make(chan struct{})}
	r := newLifecycleRig(t, func(rt runtime.Runtime) runtime.Runtime { gate.Runtime = rt; return gate })
	ctx := context.Background()

	driven, err := r.m.Launch(ctx, r.owner, LaunchRequest{Name: "driven", Image: "fake", Flavor: r.flavor})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-gate.entered:
	case <-time.After(time.Minute):
		t.Fatal("the launch never began pulling")
	}
	// A second record, put in "pulling" behind the manager's back: nothing
	// in this process drives it (as after a request or process that died).
	abandoned, err := r.m.Launch(ctx, r.owner, LaunchRequest{Name: "abandoned", Image: "fake", Flavor: r.flavor})
	if err != nil {
		t.Fatal(err)
	}
	r.m.cancelLaunch(abandoned.ID) // its pipeline ends; the record stays where it was
	waitFor(t, func() bool { return !r.m.isLaunching(abandoned.ID) })
	if err := r.store.SetWorkbenchState(ctx, abandoned.ID, models.StatePulling, 30, "", nil); err != nil {
		t.Fatal(err)
	}
	held, _ := r.store.WorkbenchByID(ctx, abandoned.ID)

	if err := r.m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if wb, _ := r.store.WorkbenchByID(ctx, driven.ID); wb.State != models.StatePulling {
		t.Fatalf("reconciliation touched a launch in progress: %s (%s)", wb.State, wb.Reason)
	}
	wb, _ := r.store.WorkbenchByID(ctx, abandoned.ID)
	if !wb.Launching() || !r.m.isLaunching(abandoned.ID) {
		t.Fatalf("abandoned launch after reconciliation: %s %q, driven %v; want it taken up again", wb.State, wb.Reason, r.m.isLaunching(abandoned.ID))
	}
	if len(wb.GPUs) != len(held.GPUs) || len(wb.GPUs) == 0 {
		t.Errorf("abandoned launch holds GPUs %v, held %v before", wb.GPUs, held.GPUs)
	}

	close(gate.release)
	r.waitState(t, driven.ID, models.StateRunning)
	r.waitState(t, abandoned.ID, models.StateRunning)
}
