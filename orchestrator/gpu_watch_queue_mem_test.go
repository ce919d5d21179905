package orchestrator

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

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

// In memory: a watch on a 2-GPU flavor fires only when 2 GPUs are free
// for it: not for one free GPU (a model watch does), not for GPUs a queued
// launch is owed; then once. A flavor without GPUs, or disabled, cannot be
// watched.
func TestMemFlavorWatchFiresWhenTheFlavorCanStart(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	fl, err := r.store.FlavorByNameOrID(ctx, r.flavor)
	if err != nil {
		t.Fatal(err)
	}
	duo := &models.Flavor{Name: "duo", GPUModel: fl.GPUModel, GPUCount: 2, CPUMilli: 1000, MemoryMiB: 512, ShmMiB: 64, Enabled: true}
	if err := r.store.CreateFlavor(ctx, duo); err != nil {
		t.Fatal(err)
	}
	holders := r.fill(t, r.alice, LaunchRequest{})
	carol, dave := r.user(t, "carol"), r.user(t, "dave")
	if _, err := r.store.CreateGPUWatch(ctx, carol.ID, fl.GPUModel, []string{fl.GPUModel}); err != nil {
		t.Fatal(err)
	}
	w, err := r.store.CreateFlavorWatch(ctx, dave.ID, duo)
	if err != nil || w.FlavorID == nil || *w.FlavorID != duo.ID || w.GPUModel != fl.GPUModel {
		t.Fatalf("flavor watch: %+v %v", w, err)
	}
	if _, err := r.store.CreateFlavorWatch(ctx, dave.ID, duo); err == nil {
		t.Fatal("a second watch on the same flavor was accepted")
	}
	cpu := &models.Flavor{Name: "cpu only", CPUMilli: 500, MemoryMiB: 256, ShmMiB: 64, Enabled: true}
	if err := r.store.CreateFlavor(ctx, cpu); err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.CreateFlavorWatch(ctx, dave.ID, cpu); err == nil {
		t.Fatal("a watch on a flavor without GPUs was accepted")
	}
	watcher := NewGPUWatcher(r.store, r.m.pool, r.m.Events(), 0, slog.New(slog.NewTextHandler(io.Discard, nil)))
	fired := func(want int, what string) {
		t.Helper()
		if n, err := watcher.Check(ctx); err != nil || n != want {
			t.Fatalf("%s: %d watches fired (%v), want %d", what, n, err, want)
		}
	}
	fired(0, "no GPU free")

	// One GPU frees: the model watch fires, the 2-GPU flavor's does not.
	if err := r.m.Stop(ctx, holders[0].ID, ""); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, holders[0].ID, models.StateStopped)
	fired(1, "one GPU free")
	if notes, _ := r.store.ListNotifications(ctx, dave.ID, 10); len(notes) != 0 {
		t.Fatalf("dave was notified for one free GPU: %v", notes)
	}

	// Two GPUs free, but one is owed to a queued launch: not enough.
	bob := r.user(t, "bob")
	r.waitState(t, r.launch(t, bob, "takes-it", LaunchRequest{Queue: true}).ID, models.StateRunning)
	waiting := r.launch(t, bob, "waiting", LaunchRequest{Queue: true})
	r.waitState(t, waiting.ID, models.StateQueued)
	for _, h := range holders[1:3] { // bindings released without the stop that kicks the drainer
		if err := r.store.ReleaseGPUs(ctx, h.ID); err != nil {
			t.Fatal(err)
		}
	}
	fired(0, "two GPUs free, one owed to the queue")
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, waiting.ID, models.StateRunning)
	fired(0, "one GPU free after the queue's launch")

	// A second GPU really frees: the flavor can start; its watch fires once.
	if err := r.m.Stop(ctx, holders[3].ID, ""); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, holders[3].ID, models.StateStopped)
	fired(1, "two GPUs free")
	fired(0, "again")
	notes, err := r.store.ListNotifications(ctx, dave.ID, 10)
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0].Message, "Flavor duo can start now: 2 × ") || notes[0].Link != "/workbenches/new?flavor=duo" {
		t.Fatalf("dave's notifications: %+v (%v)", notes, err)
	}

	// A disabled flavor cannot be watched.
	duo.Enabled = false
	if err := r.store.UpdateFlavor(ctx, duo); err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.CreateFlavorWatch(ctx, carol.ID, duo); err == nil {
		t.Fatal("a watch on a disabled flavor was accepted")
	}
}

// In memory: a watch fires for what its user could launch. A GPU free but
// booked for someone else now is not (carol was told "free", then refused
// "reserved for someone else now"); a queued launch held by its owner's
// quota takes no free GPU, so it does not keep watches silent (it did, for
// as long as the quota held it).
func TestMemGPUWatchCountsBookingsAndQuotaHolds(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	holders := r.fill(t, r.alice, LaunchRequest{})
	fl, err := r.store.FlavorByNameOrID(ctx, r.flavor)
	if err != nil {
		t.Fatal(err)
	}
	carol, bob, dave := r.user(t, "carol"), r.user(t, "bob"), r.user(t, "dave")
	if _, err := r.store.CreateGPUWatch(ctx, carol.ID, fl.GPUModel, []string{fl.GPUModel}); err != nil {
		t.Fatal(err)
	}
	watcher := NewGPUWatcher(r.store, r.m.pool, r.m.Events(), 0, slog.New(slog.NewTextHandler(io.Discard, nil)))
	watcher.SetClock(r.m.Now)

	// Dave may hold one workbench: his second launch waits on his quota.
	one := int64(1)
	if err := r.store.SetQuota(ctx, models.ScopeUser, dave.ID, models.Limits{MaxWorkbenches: &one}, "test"); err != nil {
		t.Fatal(err)
	}
	cpu := &models.Flavor{Name: "cpu only", CPUMilli: 500, MemoryMiB: 256, ShmMiB: 64, Enabled: true}
	if err := r.store.CreateFlavor(ctx, cpu); err != nil {
		t.Fatal(err)
	}
	if _, err := r.m.Launch(ctx, dave, LaunchRequest{Name: "first", Image: "mem", Flavor: cpu.Name}); err != nil {
		t.Fatal(err)
	}
	held := r.launch(t, dave, "held", LaunchRequest{Queue: true})
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if w, _ := r.store.WorkbenchByID(ctx, held.ID); w.State != models.StateQueued || !WaitsOnOwnerAlone(w.QueueReason) {
		t.Fatalf("dave's second launch: %s %q, want queued on his quota", w.State, w.QueueReason)
	}

	// One GPU frees, and bob books one GPU from now: carol cannot have it.
	if err := r.m.Stop(ctx, holders[0].ID, ""); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, holders[0].ID, models.StateStopped)
	now := r.m.Now()
	booking, err := r.m.Reserve(ctx, bob, ReserveRequest{Model: fl.GPUModel, Units: 1, Start: now, End: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := watcher.Check(ctx); err != nil || n != 0 {
		t.Fatalf("a GPU booked for bob fired %d watches (%v), want 0", n, err)
	}
	// The booking released, the GPU is carol's to take, dave's held launch
	// notwithstanding: the watch fires.
	if err := r.store.ReleaseReservation(ctx, booking.ID, "test"); err != nil {
		t.Fatal(err)
	}
	if n, err := watcher.Check(ctx); err != nil || n != 1 {
		t.Fatalf("a GPU free for carol fired %d watches (%v), want 1", n, err)
	}
}
