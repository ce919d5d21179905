package orchestrator

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// A launch that does not queue cannot take a free GPU that an earlier
// request of its priority waits for in the queue (a 2-GPU request waiting
// with 1 free): it is refused with the queue's reason and leaves nothing
// behind, and the GPU stays for the request that waits. A launch of a
// higher priority class is placed at once, by the queue's own order.
func TestMemDirectLaunchDoesNotJumpTheQueue(t *testing.T) {
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
	// The rig holds one GPU; alice takes six more: one is free.
	for i := range 6 {
		r.waitState(t, r.launch(t, r.alice, "hold-"+string(rune('a'+i)), LaunchRequest{}).ID, models.StateRunning)
	}
	bob, eve := r.user(t, "bob"), r.user(t, "eve")
	waiting, err := r.m.Launch(ctx, bob, LaunchRequest{Name: "pair", Image: "mem", Flavor: duo.Name, Queue: true, Priority: "batch"})
	if err != nil || waiting.State != models.StateQueued {
		t.Fatalf("bob's 2-GPU request: %+v (%v), want queued", waiting, err)
	}
	r.advance(time.Second)

	_, err = r.m.Launch(ctx, eve, LaunchRequest{Name: "jump", Image: "mem", Flavor: r.flavor, Priority: "batch"})
	var re *RefusedError
	if !errors.As(err, &re) || re.Code != "no_capacity" || !strings.Contains(re.Message, "launch with queue") {
		t.Fatalf("eve's launch without queue while bob waits for the GPU: %v, want refused, pointing to the queue", err)
	}
	if mine, _ := r.store.ListWorkbenches(ctx, eve.ID); len(mine) != 0 {
		t.Errorf("the refused launch left %d workbenches behind: %+v", len(mine), mine)
	}
	active, err := r.store.ListWorkbenches(ctx, 0, models.ActiveStates...)
	held := 0
	for _, w := range active {
		held += len(w.GPUs)
	}
	if err != nil || held != 7 {
		t.Errorf("GPUs held after the refusal: %d (%v), want 7 (the eighth is the one bob waits for)", held, err)
	}

	// Interactive goes before batch: placed at once, from the free GPU.
	wb, err := r.m.Launch(ctx, eve, LaunchRequest{Name: "urgent", Image: "mem", Flavor: r.flavor, Priority: "interactive"})
	if err != nil {
		t.Fatalf("eve's interactive launch: %v, want placed ahead of the batch request", err)
	}
	r.waitState(t, wb.ID, models.StateRunning)
	if got, _ := r.store.WorkbenchByID(ctx, waiting.ID); got.State != models.StateQueued {
		t.Errorf("bob's request after eve's: %s, want still queued", got.State)
	}
}

// The queue's start estimate counts a run's end by its owner's quota's
// maximum runtime (the culler stops it then), not only by its flavor's:
// a launch waiting behind runs of a user whose quota caps runs at 1 h is
// told when the first of them ends, not "unknown".
func TestMemQueueEstimateCountsTheQuotaRuntime(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	eve := r.user(t, "eve")
	hour := int64(1)
	if err := r.store.SetQuota(ctx, models.ScopeUser, eve.ID, models.Limits{MaxRuntimeHours: &hour}, "test"); err != nil {
		t.Fatal(err)
	}
	var first *models.Workbench
	for i := range 7 {
		wb := r.waitState(t, r.launch(t, eve, "run-"+string(rune('a'+i)), LaunchRequest{}).ID, models.StateRunning)
		if first == nil {
			first = wb
		}
		r.advance(time.Minute)
	}
	waiting := r.launch(t, r.user(t, "bob"), "next", LaunchRequest{Queue: true})
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := r.store.WorkbenchByID(ctx, waiting.ID)
	if err != nil || got.State != models.StateQueued {
		t.Fatalf("bob's launch: %+v (%v), want queued", got, err)
	}
	want := first.StartedAt.Add(time.Hour)
	if got.EstimatedStart == nil || !got.EstimatedStart.Equal(want) {
		t.Errorf("estimated start %v (%s), want %v: the first of eve's runs ends by her quota's 1 h", got.EstimatedStart, got.QueueReason, want)
	}
}
