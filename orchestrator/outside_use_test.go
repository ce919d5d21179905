package orchestrator

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"

	"workbench/models"
	"workbench/orchestrator/gpu"
)

// A free GPU running a process the portal did not start (NVML lists it) is
// shown as used outside Workbench, and a launch is given another free GPU
// first: the store binds a need's candidates in order, and that GPU comes
// last. Once every other GPU is held, it is still handed out. A GPU a
// workbench holds is not judged, whatever runs on it.
func TestFreeGPUUsedOutsideThePortalIsShownAndGivenLast(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store := openStore(t, log)
	srv := dgxh100.New()
	load := gpu.AttachMockLoad(srv)
	load.Set(0, gpu.MockGPULoad{UtilPercent: 90, Processes: []gpu.Process{{PID: 4242, UsedMemMiB: 30720}}})
	inv, err := gpu.New(gpu.Mode{Kind: gpu.KindMock, Mock: "dgxh100"}, gpu.WithNVML(srv, true, "mock:dgxh100"), gpu.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	devs, err := inv.Devices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.SeedCatalog(ctx, []string{devs[0].Model}); err != nil {
		t.Fatal(err)
	}
	sampler := gpu.NewSampler(inv, time.Hour, 10, log)
	if err := sampler.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	pool := NewPool(inv, sampler, store)

	list, err := pool.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if o := list[0].Outside; len(o) != 1 || o[0].PID != 4242 || o[0].UsedMemMiB != 30720 {
		t.Fatalf("GPU 0's outside processes %+v, want PID 4242 with 30720 MiB", o)
	}
	for _, g := range list[1:] {
		if g.Outside != nil {
			t.Fatalf("GPU %d has outside processes %+v", g.Index, g.Outside)
		}
	}

	fls, err := store.ListFlavors(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	var one *models.Flavor
	for i := range fls {
		if fls[i].GPUCount == 1 && (fls[i].UnitKind == "" || fls[i].UnitKind == models.UnitGPU) {
			one = &fls[i]
			break
		}
	}
	if one == nil {
		t.Fatal("no one-GPU flavor in the seeded catalog")
	}
	owner, err := store.CreateUser(ctx, models.NewUser{Username: "ada", Password: "ada-password-1", Role: "user"})
	if err != nil {
		t.Fatal(err)
	}
	imgs, _ := store.ListImages(ctx, false)
	// Seven launches take the seven unused GPUs; the eighth gets GPU 0.
	for i := 0; i < 8; i++ {
		need, err := pool.Need(ctx, one)
		if err != nil {
			t.Fatal(err)
		}
		if need.Candidates[len(need.Candidates)-1] != devs[0].UUID {
			t.Fatalf("launch %d: GPU 0 is not the last candidate: %v", i, need.Candidates)
		}
		wb := &models.Workbench{Name: "w" + string(rune('a'+i)), OwnerID: owner.ID, ImageID: imgs[0].ID, FlavorID: one.ID}
		if err := store.CreateWorkbench(ctx, wb, need, nil); err != nil {
			t.Fatalf("launch %d: %v", i, err)
		}
		got := wb.GPUs[0]
		if (got == devs[0].UUID) != (i == 7) {
			t.Fatalf("launch %d was given %s (GPU 0, used outside, is %s): it should come only when no other is free", i, got, devs[0].UUID)
		}
	}
	// Held now: its processes are its workbench's, not judged.
	list, err = pool.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if list[0].WorkbenchID == "" || list[0].Outside != nil {
		t.Fatalf("GPU 0 held by %q shows outside processes %+v", list[0].WorkbenchID, list[0].Outside)
	}
}
