package orchestrator

import (
	"context"
	"errors"
	"strings"
	"testing"

	"workbench/models"
)

// TestMemLaunchThatCouldNeverStartIsRefused: a launch asking for more GPUs
// than the server has at all is refused at once, queue or not (it was
// queued and waited for good, holding back every launch behind it). One
// that queued and then could never fit (its flavor grown past the server)
// keeps its place but holds back nobody: a one-GPU launch behind it starts
// on a free GPU. Drained GPUs still count: they come back.
func TestMemLaunchThatCouldNeverStartIsRefused(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	fl, err := r.store.FlavorByNameOrID(ctx, r.flavor)
	if err != nil {
		t.Fatal(err)
	}
	big := &models.Flavor{Name: "big", GPUModel: fl.GPUModel, GPUCount: 9, CPUMilli: 1000, MemoryMiB: 512, ShmMiB: 64, Enabled: true}
	if err := r.store.CreateFlavor(ctx, big); err != nil {
		t.Fatal(err)
	}
	bob := r.user(t, "bob")
	for _, queue := range []bool{true, false} {
		_, err := r.m.Launch(ctx, bob, LaunchRequest{Name: "nine", Image: "mem", Flavor: "big", Queue: queue})
		var re *RefusedError
		if !errors.As(err, &re) || re.Code != "no_capacity" || !strings.Contains(re.Message, "this server has 8") || !strings.Contains(re.Message, "could never start") {
			t.Errorf("nine GPUs on an eight-GPU server (queue %v): %v, want no_capacity saying it could never start", queue, err)
		}
	}
	// Eight with every GPU drained: they come back, so it queues.
	big.GPUCount = 8
	if err := r.store.UpdateFlavor(ctx, big); err != nil {
		t.Fatal(err)
	}
	gpus, err := r.m.pool.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gpus {
		if err := r.m.pool.SetDrained(ctx, g.UUID, true, "root"); err != nil {
			t.Fatal(err)
		}
	}
	eight, err := r.m.Launch(ctx, bob, LaunchRequest{Name: "eight", Image: "mem", Flavor: "big", Queue: true})
	if err != nil || eight.State != models.StateQueued {
		t.Fatalf("eight GPUs, all drained: %v %v, want queued", eight, err)
	}
	for _, g := range gpus {
		if err := r.m.pool.SetDrained(ctx, g.UUID, false, "root"); err != nil {
			t.Fatal(err)
		}
	}
	// The flavor grows past the server while it waits: it keeps its place
	// but holds back nobody, and says why it waits.
	big.GPUCount = 9
	if err := r.store.UpdateFlavor(ctx, big); err != nil {
		t.Fatal(err)
	}
	one := r.launch(t, bob, "one", LaunchRequest{Queue: true})
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, one.ID, models.StateRequested, models.StatePulling, models.StateStarting, models.StateRunning)
	b, err := r.store.WorkbenchByID(ctx, eight.ID)
	if err != nil {
		t.Fatal(err)
	}
	if b.State != models.StateQueued || !strings.Contains(b.QueueReason, "this server has 8 now") {
		t.Errorf("the launch whose flavor grew past the server: %s %q, want queued, saying the server has 8", b.State, b.QueueReason)
	}
}
