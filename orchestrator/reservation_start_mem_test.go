package orchestrator

import (
	"context"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// In memory: starting a stopped workbench again binds units like a launch
// and is held to the same rule: during someone else's booking, it may not
// take the units booked for them (refused, told why); the booker's own
// start may; once the window is over, the other's start goes through.
func TestMemStartRespectsOthersReservations(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	held := r.fill(t, r.alice, LaunchRequest{}) // all 8 GPUs bound (the rig's own + 7)
	carol := r.user(t, "carol")
	// Two of alice's stopped, then carol's launched on a freed GPU and
	// stopped: two GPUs free, three stopped workbenches.
	for _, wb := range held[:2] {
		if err := r.m.Stop(ctx, wb.ID, ""); err != nil {
			t.Fatal(err)
		}
		r.waitState(t, wb.ID, models.StateStopped)
	}
	carolsWB := r.launch(t, carol, "carols", LaunchRequest{})
	r.waitState(t, carolsWB.ID, models.StateRunning)
	if err := r.m.Stop(ctx, carolsWB.ID, ""); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, carolsWB.ID, models.StateStopped)
	// Carol books both free GPUs' worth for the next two hours, from now.
	now := r.m.now()
	model := "NVIDIA H100 80GB HBM3"
	if _, err := r.m.Reserve(ctx, carol, ReserveRequest{Model: model, Units: 2, Start: now, End: now.Add(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	err := r.m.Start(ctx, held[0].ID, r.alice)
	if refusedCode(err) != "no_capacity" || !strings.Contains(err.Error(), "(2 reserved for someone else now)") {
		t.Fatalf("alice's start during carol's booking: %v, want no_capacity with 2 reserved for someone else", err)
	}
	if w, _ := r.store.WorkbenchByID(ctx, held[0].ID); w.State != models.StateStopped || len(w.Units) != 0 {
		t.Fatalf("alice's refused start left %s with units %+v", w.State, w.Units)
	}
	// The booker's own start takes a booked unit.
	if err := r.m.Start(ctx, carolsWB.ID, carol); err != nil {
		t.Fatalf("carol's start within her booking: %v", err)
	}
	r.waitState(t, carolsWB.ID, models.StateRunning)
	// Still one free and one booked for carol, unused by her: alice waits.
	if err := r.m.Start(ctx, held[0].ID, r.alice); refusedCode(err) != "no_capacity" {
		t.Fatalf("alice's start with carol's second unit free: %v", err)
	}
	// After the window, the unit is anyone's.
	r.advance(2*time.Hour + time.Minute)
	if err := r.m.Start(ctx, held[0].ID, r.alice); err != nil {
		t.Fatalf("alice's start after the booking: %v", err)
	}
	if w := r.waitState(t, held[0].ID, models.StateRunning, models.StateFailed); w.State != models.StateRunning {
		t.Fatalf("alice's restarted workbench: %s %q", w.State, w.Reason)
	}
}
