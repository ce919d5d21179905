package orchestrator

import (
	"context"
	"errors"
	"testing"
	"time"

	"workbench/models"
)

// In memory: an administrator's boost moves a queued workbench to the
// front of its priority class — past earlier arrivals and past a user with
// less recent use — but not past a higher class; the latest boost goes
// first; a boost counts only for the wait it was given in.
func TestMemQueueBoost(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	r.fill(t, r.alice, LaunchRequest{}) // alice has heavy recent use
	r.advance(time.Hour)
	carol := r.user(t, "carol")
	light := r.launch(t, carol, "light", LaunchRequest{Queue: true})
	r.advance(time.Second)
	first := r.launch(t, r.alice, "first", LaunchRequest{Queue: true})
	r.advance(time.Second)
	heavy := r.launch(t, r.alice, "heavy", LaunchRequest{Queue: true})
	r.advance(time.Second)
	batch := r.launch(t, carol, "batch", LaunchRequest{Queue: true, Priority: "batch"})
	positions := func() [4]int {
		t.Helper()
		if err := r.m.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		var out [4]int
		for i, wb := range []*models.Workbench{light, first, heavy, batch} {
			got, _ := r.store.WorkbenchByID(ctx, wb.ID)
			out[i] = got.QueuePosition
		}
		return out
	}
	if got := positions(); got != [4]int{1, 2, 3, 4} {
		t.Fatalf("before the boost: light, first, heavy, batch at %v", got)
	}
	if err := r.m.Boost(ctx, heavy.ID); err != nil {
		t.Fatal(err)
	}
	if got := positions(); got != [4]int{2, 3, 1, 4} {
		t.Fatalf("heavy boosted: light, first, heavy, batch at %v, want 2 3 1 4", got)
	}
	r.advance(time.Second)
	if err := r.m.Boost(ctx, batch.ID); err != nil {
		t.Fatal(err)
	}
	if got := positions(); got != [4]int{2, 3, 1, 4} {
		t.Fatalf("a boost does not pass a higher class: %v", got)
	}
	if err := r.m.Boost(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	if got := positions(); got != [4]int{3, 1, 2, 4} {
		t.Fatalf("the latest boost first: %v, want 3 1 2 4", got)
	}
	// The boosted one is placed first when a GPU frees.
	if err := r.m.Stop(ctx, r.wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, first.ID, models.StateRunning)
	if err := r.m.Boost(ctx, first.ID); !errors.Is(err, models.ErrConflict) {
		t.Fatalf("boost of a running workbench: %v", err)
	}
}
