package orchestrator

import (
	"context"
	"strings"
	"testing"

	"workbench/models"
)

// In memory: "Restart with GPUs" on a full pool stops the CPU-only run and
// waits in the queue with its position; when a GPU frees, the queue starts
// it in the flavor's own shape, with its GPU and the same home.
func TestMemRestartWithGPUsWaitsInTheQueue(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	fl, err := r.store.FlavorByNameOrID(ctx, r.flavor)
	if err != nil {
		t.Fatal(err)
	}
	twin := &models.Flavor{Name: "cpu twin", CPUMilli: 500, MemoryMiB: 256, ShmMiB: 64, Enabled: true}
	if err := r.store.CreateFlavor(ctx, twin); err != nil {
		t.Fatal(err)
	}
	fl.CPUTwinID = twin.ID
	if err := r.store.UpdateFlavor(ctx, fl); err != nil {
		t.Fatal(err)
	}
	bob := r.user(t, "bob")
	wb := r.waitState(t, r.launch(t, bob, "setup", LaunchRequest{}).ID, models.StateRunning)
	if err := r.m.Stop(ctx, wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	if err := r.m.StartAs(ctx, wb.ID, bob, true); err != nil {
		t.Fatalf("start without GPU: %v", err)
	}
	if cpu := r.waitState(t, wb.ID, models.StateRunning); !cpu.CPUOnly() || len(cpu.GPUs) != 0 {
		t.Fatalf("CPU-only run: cpu-only %v, GPUs %v", cpu.CPUOnly(), cpu.GPUs)
	}
	r.fill(t, r.alice, LaunchRequest{}) // every GPU is held now

	if err := r.m.RestartWithGPUs(ctx, wb.ID, bob); err != nil {
		t.Fatalf("restart with GPUs on a full pool: %v, want it to wait in the queue", err)
	}
	queued := r.waitState(t, wb.ID, models.StateQueued)
	if queued.CPUOnly() || queued.Reason != "waiting for GPUs to restart with them" {
		t.Fatalf("queued: cpu-only %v, reason %q", queued.CPUOnly(), queued.Reason)
	}
	waitFor(t, func() bool {
		queued, _ = r.store.WorkbenchByID(ctx, wb.ID)
		return queued.QueuePosition == 1
	})
	if !strings.Contains(queued.QueueReason, "0 free") {
		t.Fatalf("queue reason %q", queued.QueueReason)
	}
	if _, err := r.store.OpenIntervalOf(ctx, wb.ID); err == nil {
		t.Fatal("a workbench waiting for GPUs is still metered")
	}

	if err := r.m.Stop(ctx, r.wb.ID, ""); err != nil { // a GPU frees
		t.Fatal(err)
	}
	gpu := r.waitState(t, wb.ID, models.StateRunning)
	if gpu.CPUOnly() || len(gpu.GPUs) != 1 {
		t.Fatalf("after the wait: cpu-only %v, GPUs %v, want the flavor's own shape with 1 GPU", gpu.CPUOnly(), gpu.GPUs)
	}
	iv, err := r.store.OpenIntervalOf(ctx, wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if iv.GPUCount != 1 {
		t.Fatalf("the run is metered with %d GPUs, want 1", iv.GPUCount)
	}
}
