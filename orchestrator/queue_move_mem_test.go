package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"workbench/models"
)

// In memory: an administrator moves a queued workbench to any position of
// its queue; the drain follows at once (positions), the order holds for
// later drains and new arrivals of the class queue behind it; a move never
// crosses priority classes; the first in the order starts when a GPU
// frees; the move is audited.
func TestMemQueueMoveToAnyPosition(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	r.fill(t, r.alice, LaunchRequest{})
	var q []*models.Workbench
	for i := range 4 {
		r.advance(time.Second)
		q = append(q, r.launch(t, r.user(t, fmt.Sprintf("u%d", i)), fmt.Sprintf("q%d", i), LaunchRequest{Queue: true}))
	}
	r.advance(time.Second)
	batch := r.launch(t, r.alice, "batch", LaunchRequest{Queue: true, Priority: "batch"})
	pos := func(wb *models.Workbench) int {
		w, _ := r.store.WorkbenchByID(ctx, wb.ID)
		return w.QueuePosition
	}
	order := func() []int { return []int{pos(q[0]), pos(q[1]), pos(q[2]), pos(q[3]), pos(batch)} }
	if got := order(); fmt.Sprint(got) != "[1 2 3 4 5]" {
		t.Fatalf("positions before the move %v", got)
	}
	got, err := r.m.MoveQueued(ctx, q[3].ID, 2, "admin")
	if err != nil || got != 2 {
		t.Fatalf("move to 2: %d %v", got, err)
	}
	if got := order(); fmt.Sprint(got) != "[1 3 4 2 5]" {
		t.Fatalf("positions after moving q3 to 2: %v", got)
	}
	// The batch launch cannot pass the interactive ones: clamped to 5.
	if got, err := r.m.MoveQueued(ctx, batch.ID, 1, "admin"); err != nil || got != 5 {
		t.Fatalf("batch to 1: %d %v", got, err)
	}
	// A new interactive arrival queues behind the order the admin set,
	// and the order holds through later drains.
	r.advance(time.Second)
	late := r.launch(t, r.user(t, "late"), "late", LaunchRequest{Queue: true})
	r.advance(time.Minute)
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got := append(order(), pos(late)); fmt.Sprint(got) != "[1 3 4 2 6 5]" {
		t.Fatalf("positions with a later arrival %v", got)
	}
	// q3 to the front; the GPU that frees goes to it.
	if got, err := r.m.MoveQueued(ctx, q[3].ID, 1, "admin"); err != nil || got != 1 {
		t.Fatalf("move to 1: %d %v", got, err)
	}
	if err := r.m.Stop(ctx, r.wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, q[3].ID, models.StateRunning)
	if w, _ := r.store.WorkbenchByID(ctx, q[0].ID); w.State != models.StateQueued || w.QueuePosition != 1 {
		t.Fatalf("q0 after q3 started: %s %d", w.State, w.QueuePosition)
	}
	if _, err := r.m.MoveQueued(ctx, q[3].ID, 1, "admin"); !errors.Is(err, models.ErrConflict) {
		t.Fatalf("moving a running workbench: %v", err)
	}
	if _, err := r.m.MoveQueued(ctx, q[0].ID, 0, "admin"); err == nil {
		t.Fatal("position 0 accepted")
	}
	audit, _ := r.store.ListAudit(ctx, 20)
	moves := 0
	for _, a := range audit {
		if a.Action == "queue.move" && a.Actor == "admin" {
			moves++
		}
	}
	if moves != 3 {
		t.Fatalf("%d queue.move audit entries, want 3", moves)
	}
}
