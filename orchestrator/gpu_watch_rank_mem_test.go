package orchestrator

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"workbench/models"
	"workbench/orchestrator/scheduler"
)

// In memory: a preempted 4-GPU run waiting to resume (preemptible class)
// holds back no GPU from an interactive user: with one GPU free their
// model watch fires, and their launch does start at once. A watch whose
// launch would itself be preemptible (the flavor's default class) stays
// silent: the 4-GPU run came first in its class.
func TestMemGPUWatchCountsOnlyTheQueueAheadOfIt(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	fl, err := r.store.FlavorByNameOrID(ctx, r.flavor)
	if err != nil {
		t.Fatal(err)
	}
	quad := &models.Flavor{Name: "quad", GPUModel: fl.GPUModel, GPUCount: 4, CPUMilli: 1000, MemoryMiB: 512, ShmMiB: 64, Enabled: true}
	spot := &models.Flavor{Name: "spot", GPUModel: fl.GPUModel, GPUCount: 1, CPUMilli: 1000, MemoryMiB: 512, ShmMiB: 64, Enabled: true}
	for _, f := range []*models.Flavor{quad, spot} {
		if err := r.store.CreateFlavor(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.store.SetPriorityDefault(ctx, models.PriorityScopeFlavor, spot.ID, "preemptible"); err != nil {
		t.Fatal(err)
	}
	holders := r.fill(t, r.alice, LaunchRequest{})
	bob := r.user(t, "bob")
	waiting, err := r.m.Launch(ctx, bob, LaunchRequest{Name: "pretrain", Image: "mem", Flavor: "quad", Queue: true, Preemptible: true, AutoResume: true})
	if err != nil {
		t.Fatal(err)
	}
	r.waitState(t, waiting.ID, models.StateQueued)
	carol, dave := r.user(t, "carol"), r.user(t, "dave")
	if _, err := r.store.CreateGPUWatch(ctx, carol.ID, fl.GPUModel, []string{fl.GPUModel}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.CreateFlavorWatch(ctx, dave.ID, spot); err != nil {
		t.Fatal(err)
	}
	watcher := NewGPUWatcher(r.store, r.m.pool, r.m.Events(), 0, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if n, err := watcher.Check(ctx); err != nil || n != 0 {
		t.Fatalf("no GPU free, yet %d watches fired (%v)", n, err)
	}

	if err := r.m.Stop(ctx, holders[0].ID, ""); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, holders[0].ID, models.StateStopped)
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if wb := r.waitState(t, waiting.ID, models.StateQueued); len(wb.GPUs) != 0 {
		t.Fatalf("the 4-GPU run was placed on %v", wb.GPUs)
	}
	if n, err := watcher.Check(ctx); err != nil || n != 1 {
		t.Fatalf("one GPU free for an interactive launch: %d watches fired (%v), want carol's", n, err)
	}
	if notes, _ := r.store.ListNotifications(ctx, carol.ID, 10); len(notes) != 1 {
		t.Fatalf("carol has %d notifications, want 1", len(notes))
	}
	if notes, _ := r.store.ListNotifications(ctx, dave.ID, 10); len(notes) != 0 {
		t.Fatalf("dave's preemptible launch would wait behind the 4-GPU run, yet he was told: %v", notes)
	}
	// What the watch promised: carol's launch starts now, without queueing.
	r.waitState(t, r.launch(t, carol, "now", LaunchRequest{}).ID, models.StateRunning)
}

// freeFor: launches of the watcher's class and above are owed their units;
// a lower one takes only what it can start on now.
func TestWatchFreeForGoesByRank(t *testing.T) {
	p := scheduler.PoolGPU("H100")
	q := queuedUnits{p: {{rank: 100, units: 1}, {rank: 10, units: 4}, {rank: 10, units: 1}}}
	for _, c := range []struct{ rank, free, want int }{
		{100, 3, 1}, // interactive: the interactive ask (1); the 4 does not fit in 2, the spot 1 does
		{100, 1, 0}, // the interactive ask takes it
		{50, 3, 1},  // batch: as interactive here
		{10, 6, 0},  // preemptible: every ask is its class or above
		{200, 5, 0}, // above all: the 4 fits in 5 and is placed, then the 1
		{200, 3, 1}, // the 4 cannot start on 3 and holds nothing; both 1s can
	} {
		if got := q.freeFor(p, c.rank, c.free); got != c.want {
			t.Errorf("rank %d, %d free: %d left, want %d", c.rank, c.free, got, c.want)
		}
	}
}
