package orchestrator

import (
	"context"
	"errors"
	"strings"
	"testing"

	"workbench/models"
)

// TestMemLaunchThatCouldNeverStartIsRefused: a launch asking for more GPUs
// than the server has in service is refused at once, queue or not (it was
// queued and waited for good, holding back every launch behind it); one
// that queued while the GPUs were there and then lost them to a drain
// keeps its place but holds back nobody: a one-GPU launch behind it starts
// on a free GPU.
func TestMemLaunchThatCouldNeverStartIsRefused(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	fl, err := r.store.FlavorByNameOrID(ctx, r.flavor)
	if err != nil {
		t.Fatal(err)
	}
	eight := &models.Flavor{Name: "eight", GPUModel: fl.GPUModel, GPUCount: 8, CPUMilli: 1000, MemoryMiB: 512, ShmMiB: 64, Enabled: true}
	if err := r.store.CreateFlavor(ctx, eight); err != nil {
		t.Fatal(err)
	}
	bob := r.user(t, "bob")
	// All eight in service, one held by the rig's workbench: it queues.
	big, err := r.m.Launch(ctx, bob, LaunchRequest{Name: "big", Image: "mem", Flavor: "eight", Queue: true})
	if err != nil || big.State != models.StateQueued {
		t.Fatalf("eight GPUs with one held: %v %v, want queued", big, err)
	}
	// One free GPU is drained: seven in service now.
	gpus, err := r.m.pool.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	drained := ""
	for _, g := range gpus {
		if g.WorkbenchID == "" && drained == "" {
			drained = g.UUID
		}
	}
	if err := r.m.pool.SetDrained(ctx, drained, true, "root"); err != nil {
		t.Fatal(err)
	}
	// A new eight-GPU launch is refused, queued or not, saying why.
	for _, queue := range []bool{true, false} {
		_, err := r.m.Launch(ctx, bob, LaunchRequest{Name: "again", Image: "mem", Flavor: "eight", Queue: queue})
		var re *RefusedError
		if !errors.As(err, &re) || re.Code != "no_capacity" || !strings.Contains(re.Message, "this server can hand out 7") || !strings.Contains(re.Message, "could never start") {
			t.Errorf("eight GPUs with seven in service (queue %v): %v, want no_capacity saying it could never start", queue, err)
		}
	}
	// The queued one holds back nobody: a one-GPU launch starts.
	one := r.launch(t, bob, "one", LaunchRequest{Queue: true})
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, one.ID, models.StateRequested, models.StatePulling, models.StateStarting, models.StateRunning)
	b, err := r.store.WorkbenchByID(ctx, big.ID)
	if err != nil {
		t.Fatal(err)
	}
	if b.State != models.StateQueued || !strings.Contains(b.QueueReason, "waits until GPUs return to service") {
		t.Errorf("the eight-GPU launch queued before the drain: %s %q, want queued, waiting for GPUs to return to service", b.State, b.QueueReason)
	}
}
