package orchestrator

import (
	"context"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// A run is stopped at its maximum runtime, not up to a cull interval (a
// minute by default) later: the cull pass before the limit arms a timer
// for it. The clock is the test's; the timer waits the 2 s left in real
// time, by which the test's clock has reached the limit.
func TestMemMaxRuntimeStopsAtItsInstant(t *testing.T) {
	t.Parallel()
	r, advance := clockedUnitRig(t)
	ctx := context.Background()
	fl, err := r.store.FlavorByNameOrID(ctx, "whole")
	if err != nil {
		t.Fatal(err)
	}
	fl.MaxRuntimeS = 15 * 60
	if err := r.store.UpdateFlavor(ctx, fl); err != nil {
		t.Fatal(err)
	}
	wb := r.launchRunning(t, "timed", "whole")
	// A pass 2 s before the limit finds nothing to stop, and the next one
	// is a minute away.
	advance(wb.StartedAt.Add(15*time.Minute - 2*time.Second).Sub(r.m.now()))
	r.m.Cull(ctx)
	if got, _ := r.store.WorkbenchByID(ctx, wb.ID); got.State != models.StateRunning {
		t.Fatalf("stopped 2 s before its limit: %s %q", got.State, got.Reason)
	}
	advance(2 * time.Second)
	got := r.mem().waitState(t, wb.ID, models.StateStopped)
	if !strings.Contains(got.Reason, "maximum runtime of 15 min") {
		t.Fatalf("stopped with %q", got.Reason)
	}
}
