package orchestrator

import (
	"context"
	"testing"
	"time"

	"workbench/models"
)

// A queued launch waiting for the one GPU a container the portal does not
// know holds is told it starts when the orphan sweep removes that
// container, not when the first run ends: a walk-through saw "starts at
// 19:26" on a launch that started at 18:29, the sweep's time the pool page
// showed beside it.
func TestMemQueueEstimateCountsTheOrphanSweep(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	// Eve's runs end within the hour (her quota's maximum runtime): known
	// releases, later than the sweep.
	eve := r.user(t, "eve")
	hour := int64(1)
	if err := r.store.SetQuota(ctx, models.ScopeUser, eve.ID, models.Limits{MaxRuntimeHours: &hour}, "test"); err != nil {
		t.Fatal(err)
	}
	var first *models.Workbench
	for i := range 6 {
		wb := r.waitState(t, r.launch(t, eve, "run-"+string(rune('a'+i)), LaunchRequest{}).ID, models.StateRunning)
		if first == nil {
			first = wb
		}
	}
	// The eighth GPU is held by an orphan the sweep removes in 20 minutes.
	gpus, err := r.m.pool.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var orphaned string
	for _, g := range gpus {
		if g.State == GPUFree {
			orphaned = g.UUID
		}
	}
	if orphaned == "" {
		t.Fatalf("no GPU left free for the orphan: %+v", gpus)
	}
	r.mu.Lock()
	removeAt := r.now.Add(20 * time.Minute).Truncate(time.Second)
	r.mu.Unlock()
	if _, err := r.store.SetOrphanUnits(ctx, []models.OrphanHold{{ContainerID: "c-restored", Container: "workbench-restored", RemoveAt: removeAt,
		Units: []models.Unit{{Kind: models.UnitGPU, UUID: orphaned, GPUUUID: orphaned}}}}); err != nil {
		t.Fatal(err)
	}

	waiting := r.launch(t, r.user(t, "bob"), "next", LaunchRequest{Queue: true})
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := r.store.WorkbenchByID(ctx, waiting.ID)
	if err != nil || got.State != models.StateQueued {
		t.Fatalf("bob's launch: %+v (%v), want queued behind the orphan", got, err)
	}
	if got.EstimatedStart == nil || !got.EstimatedStart.Equal(removeAt) {
		t.Errorf("estimated start %v (%s), want the orphan's removal %v (the first of eve's runs ends %v)",
			got.EstimatedStart, got.QueueReason, removeAt, first.StartedAt.Add(time.Hour))
	}
}
