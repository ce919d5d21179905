package orchestrator

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"workbench/models"
)

// In memory: a watch does not fire for a GPU the queue hands to a waiting
// launch; it fires, once, for the next one that is really free.
func TestMemGPUWatchAlongsideTheQueue(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	holders := r.fill(t, r.alice, LaunchRequest{})
	bob := r.user(t, "bob")
	waiting := r.launch(t, bob, "waiting", LaunchRequest{Queue: true})
	carol := r.user(t, "carol")
	fl, err := r.store.FlavorByNameOrID(ctx, r.flavor)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.CreateGPUWatch(ctx, carol.ID, fl.GPUModel, []string{fl.GPUModel}); err != nil {
		t.Fatal(err)
	}
	watcher := NewGPUWatcher(r.store, r.m.pool, r.m.Events(), 0, slog.New(slog.NewTextHandler(io.Discard, nil)))

	// A GPU is free and the queue has not placed its launch yet (its
	// binding released without the stop that would kick the drainer): the
	// queue is owed that GPU, so the watch must not fire.
	if err := r.store.ReleaseGPUs(ctx, r.wb.ID); err != nil {
		t.Fatal(err)
	}
	if n, err := watcher.Check(ctx); err != nil || n != 0 {
		t.Fatalf("a GPU owed to the queue fired %d watches (%v), want 0", n, err)
	}
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if placed := r.waitState(t, waiting.ID, models.StateRunning); len(placed.GPUs) != 1 {
		t.Fatalf("the queued launch runs with GPUs %v", placed.GPUs)
	}
	if n, err := watcher.Check(ctx); err != nil || n != 0 {
		t.Fatalf("no GPU free, yet %d watches fired (%v)", n, err)
	}

	// A GPU really frees: the watch fires once.
	if err := r.m.Stop(ctx, holders[0].ID, ""); err != nil {
		t.Fatal(err)
	}
	if n, err := watcher.Check(ctx); err != nil || n != 1 {
		t.Fatalf("a free GPU fired %d watches (%v), want 1", n, err)
	}
	if n, err := watcher.Check(ctx); err != nil || n != 0 {
		t.Fatalf("the watch fired again: %d (%v)", n, err)
	}
	notes, err := r.store.ListNotifications(ctx, carol.ID, 10)
	if err != nil || len(notes) != 1 {
		t.Fatalf("carol has %d notifications (%v), want 1", len(notes), err)
	}
}
