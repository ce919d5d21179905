package orchestrator

import (
	"context"
	"testing"

	"workbench/models"
)

// A preempted workbench is stopped: its owner can reset the home (the
// reset was refused with "stop p2 first", and Stop does nothing to a
// preempted workbench).
func TestMemHomeResetWithAPreemptedWorkbench(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	owner, err := r.store.UserByID(ctx, r.wb.OwnerID)
	if err != nil {
		t.Fatal(err)
	}
	home := r.m.homeVolume(owner.Username)
	if _, err := r.rt.EnsureVolume(ctx, home, nil); err != nil {
		t.Fatal(err)
	}
	if err := r.rt.Exit("c-"+r.wb.ID, 0, false); err != nil {
		t.Fatal(err)
	}
	if err := r.store.SetWorkbenchState(ctx, r.wb.ID, models.StatePreempted, 100, "preempted", nil); err != nil {
		t.Fatal(err)
	}
	if err := r.m.ResetHome(ctx, owner); err != nil {
		t.Fatalf("reset with only a preempted workbench: %v", err)
	}
	if r.rt.HasVolume(home) {
		t.Error("the home volume is still there")
	}
}
