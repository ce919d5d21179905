package orchestrator

import (
	"context"
	"strings"
	"testing"
	"time"

	"workbench/models"
	"workbench/orchestrator/gpu"
)

// TestBusyGPUIsActivity: a workbench whose GPU works (a training run
// started from a terminal with nohup: no proxy traffic, no busy kernel,
// nothing Jupyter counts) is not idle-culled while its GPU is read at or
// above the idle threshold, and its page's idle deadline moves with the
// work; once the GPU goes quiet, the idle timeout runs from the last busy
// reading. A workbench on an idle GPU is culled as before, and an
// unreadable GPU is no work.
func TestBusyGPUIsActivity(t *testing.T) {
	r := newGPUIdleRig(t)
	r.m.opt.GPUWorkIsActivity = true // WORKBENCH_GPU_WORK_IS_ACTIVITY
	ctx := context.Background()
	r.m.WatchUnitIdle()
	launch := r.launcher(t)
	busy, idle, unread := launch("train", 2), launch("notebook", 3), launch("blind", 4)
	reload := func(wb *models.Workbench) *models.Workbench {
		t.Helper()
		got, err := r.store.WorkbenchByID(ctx, wb.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	set := func(trainUtil uint32) {
		r.load.Set(2, gpu.MockGPULoad{UtilPercent: trainUtil})
		r.load.Set(3, gpu.MockGPULoad{UtilPercent: 2})
		r.load.Set(4, gpu.MockGPULoad{UtilPercent: 90, Fail: true})
	}
	set(85)
	for m := 1; m <= 12; m++ {
		r.at(t, time.Duration(m)*time.Minute)
	}
	if reason, _ := r.m.cullReason(ctx, reload(busy), r.now); reason != "" {
		t.Fatalf("a workbench whose GPU works at 85%% is culled after 12 min: %q", reason)
	}
	d := r.m.Deadlines(ctx, reload(busy))
	if !d.IdleStopAt.Equal(r.now.Add(10*time.Minute)) || d.IdleFor != 0 {
		t.Errorf("deadlines while the GPU works: idle for %v, stops at %v; want 0 and %v", d.IdleFor, d.IdleStopAt, r.now.Add(10*time.Minute))
	}
	for _, wb := range []*models.Workbench{idle, unread} {
		if reason, _ := r.m.cullReason(ctx, reload(wb), r.now); !strings.Contains(reason, "idle timeout") {
			t.Errorf("%s: culled for %q after 12 idle minutes, want the idle timeout", wb.Name, reason)
		}
	}
	// The run ends: the GPU goes quiet at 12 min; idle from then on.
	set(1)
	r.at(t, 13*time.Minute)
	r.at(t, 21*time.Minute)
	if reason, _ := r.m.cullReason(ctx, reload(busy), r.now); reason != "" {
		t.Fatalf("culled 9 min after its GPU's last work: %q", reason)
	}
	r.at(t, 22*time.Minute)
	if reason, _ := r.m.cullReason(ctx, reload(busy), r.now); !strings.Contains(reason, "idle timeout") {
		t.Fatalf("10 min after its GPU's last work: %q, want the idle timeout", reason)
	}
}

// launcher returns a function that puts a running workbench of alice's,
// with a 10 min idle timeout, on the rig's GPU dev.
func (r *gpuIdleRig) launcher(t *testing.T) func(name string, dev int) *models.Workbench {
	t.Helper()
	ctx := context.Background()
	devs, err := r.m.pool.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	alice, err := r.store.UserByUsername(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	return func(name string, dev int) *models.Workbench {
		t.Helper()
		wb := &models.Workbench{Name: name, OwnerID: alice.ID, ImageID: r.wb.ImageID, FlavorID: r.flavor.ID, IdleTimeoutS: 600}
		if err := r.store.CreateWorkbench(ctx, wb, models.GPUNeed{Model: devs[dev].Model, Count: 1, Candidates: []string{devs[dev].UUID}}, nil); err != nil {
			t.Fatal(err)
		}
		if err := r.store.SetWorkbenchState(ctx, wb.ID, models.StateRunning, 100, "", map[string]any{"started_at": r.start}); err != nil {
			t.Fatal(err)
		}
		return wb
	}
}

// Without WORKBENCH_GPU_WORK_IS_ACTIVITY the idle rule is the SPEC's:
// proxy traffic and busy kernels only, so a GPU working for nobody's
// session does not keep the workbench (the maximum runtime and the
// GPU-idle rule are the other bounds).
func TestBusyGPUIsNotActivityByDefault(t *testing.T) {
	r := newGPUIdleRig(t)
	ctx := context.Background()
	r.m.WatchUnitIdle()
	busy := r.launcher(t)("train", 2)
	r.load.Set(2, gpu.MockGPULoad{UtilPercent: 85})
	for m := 1; m <= 12; m++ {
		r.at(t, time.Duration(m)*time.Minute)
	}
	wb, err := r.store.WorkbenchByID(ctx, busy.ID)
	if err != nil {
		t.Fatal(err)
	}
	if reason, _ := r.m.cullReason(ctx, wb, r.now); !strings.Contains(reason, "idle timeout") {
		t.Fatalf("a workbench whose GPU works with no session activity, after 12 min of a 10 min idle timeout: culled for %q; want the idle timeout", reason)
	}
}
