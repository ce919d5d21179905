package orchestrator

import (
	"context"
	"errors"
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
	bob := r.user(t, "bob")
	wb := cpuOnlyOnFullPool(t, r, bob)

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

	startsWithItsGPUWhenOneFrees(t, r, wb.ID)
}

// addCPUTwin gives the rig's flavor a CPU-only twin.
func (r *queueRig) addCPUTwin(t *testing.T) {
	t.Helper()
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
}

// cpuOnlyOnFullPool gives the rig's flavor a CPU-only twin, has u's
// workbench run as the twin, and fills every GPU; it returns the running
// CPU-only workbench.
func cpuOnlyOnFullPool(t *testing.T, r *queueRig, u *models.User) *models.Workbench {
	t.Helper()
	ctx := context.Background()
	r.addCPUTwin(t)
	wb := r.waitState(t, r.launch(t, u, "setup", LaunchRequest{}).ID, models.StateRunning)
	if err := r.m.Stop(ctx, wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	if err := r.m.StartAs(ctx, wb.ID, u, StartOptions{CPUOnly: true}); err != nil {
		t.Fatalf("start without GPU: %v", err)
	}
	cpu := r.waitState(t, wb.ID, models.StateRunning)
	if !cpu.CPUOnly() || len(cpu.GPUs) != 0 {
		t.Fatalf("CPU-only run: cpu-only %v, GPUs %v", cpu.CPUOnly(), cpu.GPUs)
	}
	r.fill(t, r.alice, LaunchRequest{}) // every GPU is held now
	return cpu
}

// startsWithItsGPUWhenOneFrees frees a GPU (the rig's own workbench stops)
// and sees queued workbench id start in its flavor's own shape, metered
// with its GPU.
func startsWithItsGPUWhenOneFrees(t *testing.T, r *queueRig, id string) {
	t.Helper()
	ctx := context.Background()
	if err := r.m.Stop(ctx, r.wb.ID, ""); err != nil { // a GPU frees
		t.Fatal(err)
	}
	gpu := r.waitState(t, id, models.StateRunning)
	if gpu.CPUOnly() || len(gpu.GPUs) != 1 {
		t.Fatalf("after the wait: cpu-only %v, GPUs %v, want the flavor's own shape with 1 GPU", gpu.CPUOnly(), gpu.GPUs)
	}
	iv, err := r.store.OpenIntervalOf(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if iv.GPUCount != 1 {
		t.Fatalf("the run is metered with %d GPUs, want 1", iv.GPUCount)
	}
}

// In memory: a STOPPED workbench that last ran CPU-only, started with its
// GPUs ("Start with GPUs") on a full pool, waits in the queue instead of
// being refused, and starts with its GPU when one frees; a stopped GPU
// workbench that did not run CPU-only is still refused (no_capacity).
func TestMemStartWithGPUsAfterCPUOnlyWaitsInTheQueue(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	bob := r.user(t, "bob")
	wb := cpuOnlyOnFullPool(t, r, bob)
	if err := r.m.Stop(ctx, wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	if stopped := r.waitState(t, wb.ID, models.StateStopped); !stopped.CPUOnly() {
		t.Fatal("the stopped workbench no longer says it last ran CPU-only")
	}

	// A stopped GPU workbench that ran with its GPUs: refused as before.
	other := r.waitState(t, r.launch(t, bob, "other", LaunchRequest{Queue: true}).ID, models.StateQueued)
	if err := r.m.Stop(ctx, other.ID, ""); err != nil { // leaves the queue
		t.Fatal(err)
	}
	r.waitState(t, other.ID, models.StateStopped)
	var refused *RefusedError
	if err := r.m.StartAs(ctx, other.ID, bob, StartOptions{}); !errors.As(err, &refused) || refused.Code != "no_capacity" {
		t.Fatalf("start of a stopped GPU workbench on a full pool: %v, want no_capacity", err)
	}
	// How to wait, for the page (a box) and for a script: a start takes
	// queue=true as a parameter, not the launch body's "queue": true.
	if !strings.Contains(refused.Message, "tick the box to wait for a free GPU, or send queue=true through the API") {
		t.Errorf("refusal %q: does not say how to wait", refused.Message)
	}

	if err := r.m.StartAs(ctx, wb.ID, bob, StartOptions{}); err != nil {
		t.Fatalf("start with GPUs on a full pool after a CPU-only run: %v, want it to wait in the queue", err)
	}
	queued := r.waitState(t, wb.ID, models.StateQueued)
	if queued.CPUOnly() || queued.Reason != "waiting for GPUs to start with them" {
		t.Fatalf("queued: cpu-only %v, reason %q", queued.CPUOnly(), queued.Reason)
	}
	waitFor(t, func() bool {
		queued, _ = r.store.WorkbenchByID(ctx, wb.ID)
		return queued.QueuePosition == 1
	})
	if _, err := r.store.OpenIntervalOf(ctx, wb.ID); err == nil {
		t.Fatal("a workbench waiting for GPUs is metered")
	}
	startsWithItsGPUWhenOneFrees(t, r, wb.ID)
}

// In memory: a queued launch of a CPU-only flavor that waits records that
// it starts when its turn comes, not "as soon as its GPUs are free" (it has
// none); a GPU flavor's that waits says GPUs, and once placed, that it came
// from the queue.
func TestMemQueuedCPUOnlyLaunchDoesNotWaitForGPUs(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	cpu := &models.Flavor{Name: "cpu notes", CPUMilli: 500, MemoryMiB: 256, ShmMiB: 64, Enabled: true}
	if err := r.store.CreateFlavor(ctx, cpu); err != nil {
		t.Fatal(err)
	}
	messages := func(id string) []string {
		t.Helper()
		hist, err := r.store.WorkbenchHistory(ctx, id)
		if err != nil || len(hist) == 0 {
			t.Fatalf("history %v (%v)", hist, err)
		}
		var out []string
		for _, e := range hist {
			out = append(out, e.Message)
		}
		return out
	}
	// carol may hold one workbench: her second CPU-only launch waits for
	// its turn (max_workbenches is a limit a queued launch waits for).
	carol := r.user(t, "carol")
	one := int64(1)
	if err := r.store.SetQuota(ctx, models.ScopeUser, carol.ID, models.Limits{MaxWorkbenches: &one}, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.m.Launch(ctx, carol, LaunchRequest{Name: "first", Image: "mem", Flavor: cpu.Name}); err != nil {
		t.Fatal(err)
	}
	wb, err := r.m.Launch(ctx, carol, LaunchRequest{Name: "notes", Image: "mem", Flavor: cpu.Name, Queue: true})
	if err != nil || wb.State != models.StateQueued {
		t.Fatalf("second CPU-only launch: %v %+v", err, wb)
	}
	if got := messages(wb.ID)[0]; got != "queued: it starts as soon as its turn comes" {
		t.Fatalf("CPU-only launch queued as %q", got)
	}
	bob := r.user(t, "bob")
	gpu, freeOne := r.queuedBehindAFullPool(t, bob)
	if got := messages(gpu.ID)[0]; got != "queued: it starts as soon as its GPUs are free" {
		t.Fatalf("GPU launch queued as %q", got)
	}
	freeOne()
	r.waitState(t, gpu.ID, models.StateRunning)
	if got := messages(gpu.ID); len(got) < 2 || got[1] != "placed from the queue" {
		t.Fatalf("history of a launch that waited: %q", got)
	}
}

// In memory: a launch with queue on that finds its GPUs free starts at
// once, and its history says it was requested, with no "queued" line it
// never waited in (the launch form queues by default).
func TestMemQueuedLaunchPlacedAtOnceShowsNoWait(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	wb := r.launch(t, r.alice, "now", LaunchRequest{Queue: true})
	r.waitState(t, wb.ID, models.StateRunning)
	hist, err := r.store.WorkbenchHistory(ctx, wb.ID)
	if err != nil || len(hist) == 0 {
		t.Fatalf("history %v (%v)", hist, err)
	}
	if hist[0].State != models.StateRequested || hist[0].Message != "" {
		t.Fatalf("the history starts with %s %q, want a plain requested", hist[0].State, hist[0].Message)
	}
	for _, e := range hist {
		if e.State == models.StateQueued || e.Message == "placed from the queue" {
			t.Fatalf("a launch that never waited shows %s %q: %+v", e.State, e.Message, hist)
		}
	}
}
