package orchestrator

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"

	"workbench/internal/testsupport/testimages"
	"workbench/models"
	"workbench/orchestrator/runtime"
)

// A restored database does not know a workbench launched after the backup:
// its container still runs on its GPU, labelled as this install's. Until
// the orphan sweep removes it (OrphanGrace after its creation) that GPU is
// taken — not given to a launch, shown on the pool as held by a container
// the portal does not know — and the sweep frees it for the launch that
// waited. Before, the pool showed it free and a launch was put on it
// beside the orphan.
func TestOrphanContainerKeepsItsGPUUntilTheSweep(t *testing.T) {
	r := newLifecycleRig(t, nil)
	ctx := context.Background()
	var mu sync.Mutex
	now := time.Now().UTC()
	r.m.SetClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })

	// One GPU in service, so that a launch has no other to take.
	gpus, err := r.m.pool.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	held := gpus[0].UUID
	for _, g := range gpus[1:] {
		if err := r.store.SetGPUDrained(ctx, g.UUID, true, "test", ""); err != nil {
			t.Fatal(err)
		}
	}

	// The orphan, as the original install's launch made it: labelled as
	// this install's workbench, with the GPU it was given.
	ref, err := testimages.FakeJupyter(ctx, r.cli)
	if err != nil {
		t.Fatal(err)
	}
	orphanID := "launchedafterthebackup"
	name := r.m.containerName(orphanID)
	created, err := r.cli.ContainerCreate(ctx, &container.Config{
		Image: ref, Cmd: []string{"/fakejupyter"},
		Labels: map[string]string{
			runtime.LabelInstall: r.m.installID,
			runtime.LabelID:      orphanID,
			runtime.LabelOwner:   "bob",
			runtime.LabelKind:    runtime.KindWorkbench,
			labelGPUs:            held,
		},
	}, nil, nil, nil, name)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	info, err := r.cli.ContainerInspect(ctx, created.ID)
	if err != nil {
		t.Fatal(err)
	}
	createdAt, err := time.Parse(time.RFC3339Nano, info.Created)
	if err != nil {
		t.Fatal(err)
	}

	if err := r.m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.cli.ContainerInspect(ctx, created.ID); err != nil {
		t.Fatalf("the orphan was removed within its grace: %v", err)
	}
	// The pool says who holds the GPU, and until when.
	gpus, err = r.m.pool.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if g := gpus[0]; g.UUID != held || g.State != GPUInUse || g.Unknown == nil || g.Unknown.Name != name ||
		g.Unknown.RemoveAt.Sub(createdAt.Add(10*time.Minute)).Abs() > time.Second {
		t.Fatalf("GPU %s in the pool: state %s, unknown holder %+v; want in use by %s until %s", g.UUID, g.State, g.Unknown, name, createdAt.Add(10*time.Minute))
	}
	if free := r.m.pool.FreeSummary(ctx); free != "no GPU is free right now" {
		t.Errorf("free summary %q", free)
	}

	// A launch is not given it: refused, or queued.
	_, err = r.m.Launch(ctx, r.owner, LaunchRequest{Name: "direct", Image: "fake", Flavor: r.flavor})
	var refused *RefusedError
	if !errors.As(err, &refused) || refused.Code != "no_capacity" {
		t.Fatalf("a launch with the only GPU held by the orphan: %v, want no capacity", err)
	}
	wb, err := r.m.Launch(ctx, r.owner, LaunchRequest{Name: "waits", Image: "fake", Flavor: r.flavor, Queue: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := r.store.WorkbenchByID(ctx, wb.ID); got.State != models.StateQueued {
		t.Fatalf("the queued launch is %s (units %v), want queued behind the orphan", got.State, got.Units)
	}

	// Past the grace the sweep removes the orphan and frees the GPU: the
	// launch that waited gets it.
	mu.Lock()
	now = createdAt.Add(10*time.Minute + time.Second)
	mu.Unlock()
	if err := r.m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.cli.ContainerInspect(ctx, created.ID); !client.IsErrNotFound(err) {
		t.Fatalf("the orphan is still there past its grace: %v", err)
	}
	running := r.waitState(t, wb.ID, models.StateRunning)
	if len(running.Units) != 1 || running.Units[0].UUID != held {
		t.Fatalf("the launch that waited runs on %v, want %s", running.Units, held)
	}
	if rows, err := r.store.OrphanUnits(ctx); err != nil || len(rows) != 0 {
		t.Errorf("orphan units after the sweep: %v (%v)", rows, err)
	}
}
