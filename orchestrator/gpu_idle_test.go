package orchestrator

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"

	"workbench/models"
	"workbench/orchestrator/gpu"
)

// gpuIdleRig is a manager over a real store, a DGX H100 mock with life and
// a sampler, all on one injected clock, and a running two-GPU workbench
// record whose flavor has a 60 min GPU-idle timeout.
type gpuIdleRig struct {
	m       *Manager
	store   *models.Store
	sampler *gpu.Sampler
	load    *gpu.MockLoad
	wb      *models.Workbench
	flavor  models.Flavor
	start   time.Time
	now     time.Time
}

func newGPUIdleRig(t *testing.T) *gpuIdleRig {
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s := openStore(t, log)
	if err := s.SeedCatalog(ctx, nil); err != nil {
		t.Fatal(err)
	}
	u, err := s.CreateUser(ctx, models.NewUser{Username: "alice", Password: "correct-horse-1"})
	if err != nil {
		t.Fatal(err)
	}
	imgs, _ := s.ListImages(ctx, false)
	fls, _ := s.ListFlavors(ctx, false)
	fl := fls[0]
	fl.GPUIdleTimeoutS = 3600
	if err := s.UpdateFlavor(ctx, &fl); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.FlavorByID(ctx, fl.ID); got.GPUIdleTimeoutS != 3600 {
		t.Fatalf("GPU-idle timeout not stored: %+v", got)
	}
	wb := &models.Workbench{Name: "w", OwnerID: u.ID, ImageID: imgs[0].ID, FlavorID: fl.ID}
	if err := s.CreateWorkbench(ctx, wb, models.GPUNeed{}, nil); err != nil {
		t.Fatal(err)
	}
	r := &gpuIdleRig{store: s, flavor: fl, start: time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)}
	r.now = r.start
	if err := s.SetWorkbenchState(ctx, wb.ID, models.StateRunning, 100, "", map[string]any{"started_at": r.start}); err != nil {
		t.Fatal(err)
	}

	srv := dgxh100.New()
	r.load = gpu.AttachMockLoad(srv)
	inv, err := gpu.New(gpu.Mode{Kind: gpu.KindMock, Mock: "dgxh100"}, gpu.WithNVML(srv, true, "mock:dgxh100"), gpu.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inv.Close() })
	devs, err := inv.Devices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r.sampler = gpu.NewSampler(inv, time.Hour, 4, log)
	r.sampler.SetClock(func() time.Time { return r.now })
	r.m = &Manager{store: s, pool: NewPool(inv, r.sampler, s), activity: newActivityTracker(), metrics: newPortalMetrics(), log: log}
	r.m.SetClock(func() time.Time { return r.now })
	r.wb, err = s.WorkbenchByID(ctx, wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The record binds no GPUs here (no pool allocation in this unit
	// test); the workbench "holds" GPUs 0 and 1.
	r.wb.GPUs = []string{devs[0].UUID, devs[1].UUID}
	return r
}

// at moves the clock to start+d and takes a sample.
func (r *gpuIdleRig) at(t *testing.T, d time.Duration) {
	t.Helper()
	r.now = r.start.Add(d)
	if err := r.sampler.Collect(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func (r *gpuIdleRig) reason(t *testing.T) (string, string) {
	t.Helper()
	return r.m.cullReason(context.Background(), r.wb, r.now)
}

func TestGPUIdleWarnsThenReleases(t *testing.T) {
	r := newGPUIdleRig(t)
	r.load.Set(0, gpu.MockGPULoad{UtilPercent: 2})
	r.load.Set(1, gpu.MockGPULoad{UtilPercent: 4})
	r.at(t, time.Minute)
	r.at(t, 20*time.Minute)
	g := r.m.GPUIdle(context.Background(), r.wb)
	if g.Timeout != time.Hour || g.ThresholdPercent != 5 || !g.Since.Equal(r.start.Add(time.Minute)) || g.For != 19*time.Minute {
		t.Fatalf("after 20 min: %+v", g)
	}
	if g.Warn {
		t.Error("warned after 19 of 60 idle minutes")
	}
	r.at(t, 42*time.Minute)
	g = r.m.GPUIdle(context.Background(), r.wb)
	if !g.Warn || g.For != 41*time.Minute || !g.StopAt.Equal(r.start.Add(61*time.Minute)) {
		t.Fatalf("after 42 min: %+v, want a warning, stop at 13:01", g)
	}
	if reason, _ := r.reason(t); reason != "" {
		t.Fatalf("released before its timeout: %q", reason)
	}
	r.at(t, 60*time.Minute+59*time.Second)
	if reason, _ := r.reason(t); reason != "" {
		t.Fatalf("released a second early: %q", reason)
	}
	r.at(t, 61*time.Minute)
	reason, kind := r.reason(t)
	if !strings.Contains(reason, "GPU idle") || !strings.Contains(reason, "60 min") || kind != CullGPUIdle {
		t.Fatalf("reason %q kind %q, want a GPU idle release", reason, kind)
	}
}

func TestGPUIdleNeverOnUnreadableOrBusyOrOff(t *testing.T) {
	t.Run("unreadable", func(t *testing.T) {
		r := newGPUIdleRig(t)
		r.load.Set(0, gpu.MockGPULoad{UtilPercent: 0})
		r.load.Set(1, gpu.MockGPULoad{Fail: true}) // could not read: never idle
		for m := 1; m <= 120; m += 10 {
			r.at(t, time.Duration(m)*time.Minute)
		}
		if reason, _ := r.reason(t); reason != "" {
			t.Fatalf("released on an unreadable GPU: %q", reason)
		}
		if g := r.m.GPUIdle(context.Background(), r.wb); !g.Since.IsZero() || g.Warn {
			t.Errorf("unreadable GPU shown idle: %+v", g)
		}
		// Readable again: the idle run starts now, not at the start.
		r.load.Set(1, gpu.MockGPULoad{UtilPercent: 0})
		r.at(t, 130*time.Minute)
		if g := r.m.GPUIdle(context.Background(), r.wb); !g.Since.Equal(r.start.Add(130 * time.Minute)) {
			t.Errorf("idle run after recovery starts %v", g.Since)
		}
		r.at(t, 170*time.Minute)
		if reason, _ := r.reason(t); reason != "" {
			t.Fatalf("released 40 min after recovery: %q", reason)
		}
	})
	t.Run("one GPU busy", func(t *testing.T) {
		r := newGPUIdleRig(t)
		r.load.Set(0, gpu.MockGPULoad{UtilPercent: 0})
		r.load.Set(1, gpu.MockGPULoad{UtilPercent: 60})
		r.at(t, time.Minute)
		r.at(t, 3*time.Hour)
		if reason, _ := r.reason(t); reason != "" {
			t.Fatalf("released with a busy GPU: %q", reason)
		}
	})
	t.Run("busy spell restarts the run", func(t *testing.T) {
		r := newGPUIdleRig(t)
		r.at(t, time.Minute)
		r.load.Set(0, gpu.MockGPULoad{UtilPercent: 80})
		r.at(t, 50*time.Minute)
		r.load.Set(0, gpu.MockGPULoad{UtilPercent: 0})
		r.at(t, 51*time.Minute)
		r.at(t, 100*time.Minute)
		if reason, _ := r.reason(t); reason != "" {
			t.Fatalf("released 49 min after a busy sample: %q", reason)
		}
		r.at(t, 111*time.Minute)
		if reason, _ := r.reason(t); !strings.Contains(reason, "GPU idle") {
			t.Fatalf("not released 60 min after the busy spell: %q", reason)
		}
	})
	t.Run("timeout off", func(t *testing.T) {
		r := newGPUIdleRig(t)
		r.flavor.GPUIdleTimeoutS = 0
		if err := r.store.UpdateFlavor(context.Background(), &r.flavor); err != nil {
			t.Fatal(err)
		}
		r.at(t, time.Minute)
		r.at(t, 10*time.Hour)
		if reason, _ := r.reason(t); reason != "" {
			t.Fatalf("released with GPU-idle release off: %q", reason)
		}
		if g := r.m.GPUIdle(context.Background(), r.wb); g.Timeout != 0 || g.Warn {
			t.Errorf("off, yet %+v", g)
		}
	})
}
