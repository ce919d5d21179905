package orchestrator

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"workbench/models"
	"workbench/orchestrator/gpu"
	"workbench/orchestrator/runtime"
	"workbench/orchestrator/runtime/memruntime"
)

// memRig is a manager on memRuntime with simulated GPUs and a real SQLite
// file, holding one running one-GPU workbench (record, GPU, open meter,
// container) made without a launch.
type memRig struct {
	m     *Manager
	rt    *memruntime.Runtime
	store *models.Store
	wb    *models.Workbench
}

func newMemRig(t *testing.T) *memRig {
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store := openStore(t, log)
	inv, err := gpu.New(gpu.Mode{Kind: gpu.KindMock, Mock: "dgxh100"})
	if err != nil {
		t.Fatal(err)
	}
	devs, err := inv.Devices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.SeedDefaultPrices(ctx, []string{devs[0].Model}); err != nil {
		t.Fatal(err)
	}
	if err := store.SeedCatalog(ctx, []string{devs[0].Model}); err != nil {
		t.Fatal(err)
	}
	img := &models.Image{Name: "mem", Image: "mem:latest", StartCommand: "jupyter lab --port={port} --ServerApp.base_url={base_url} --IdentityProvider.token={token}",
		RunAsUser: "1000", HomePath: "/home/jovyan", Enabled: true}
	if err := store.CreateImage(ctx, img); err != nil {
		t.Fatal(err)
	}
	owner, err := store.CreateUser(ctx, models.NewUser{Username: "alice", Password: "alice-password", Role: "user"})
	if err != nil {
		t.Fatal(err)
	}
	fls, err := store.ListFlavors(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	var fl *models.Flavor
	for i := range fls {
		if fls[i].GPUCount == 1 && fl == nil {
			fl = &fls[i]
		}
	}
	if fl == nil {
		t.Fatal("no one-GPU flavor seeded")
	}
	rt := memruntime.New()
	m := NewManager(store, NewPool(inv, nil, store), rt, "memtest", Options{}, log)
	t.Cleanup(m.Wait)

	need, err := m.pool.Need(ctx, fl)
	if err != nil {
		t.Fatal(err)
	}
	wb := &models.Workbench{Name: "mem", OwnerID: owner.ID, ImageID: img.ID, FlavorID: fl.ID, Token: "t", IdleTimeoutS: 3600}
	if err := store.CreateWorkbench(ctx, wb, need, nil); err != nil {
		t.Fatal(err)
	}
	started := time.Now().UTC().Add(-time.Minute)
	rt.AddContainer(runtime.ContainerInfo{ID: "c-" + wb.ID, Name: "/" + m.containerName(wb.ID), Labels: m.labels(wb.ID, owner.Username),
		State: "running", Running: true, StartedAt: started})
	if err := store.SetWorkbenchState(ctx, wb.ID, models.StateRunning, 100, "", map[string]any{"container_id": "c-" + wb.ID, "started_at": started}); err != nil {
		t.Fatal(err)
	}
	m.openInterval(ctx, wb.ID, started)
	// Opening the interval recomputes the owner's budget instant in the
	// background; on a busy machine that could run after a test has set a
	// budget and stop the workbench before the test looks. Let it finish.
	m.budgetWork.Wait()
	wb, err = store.WorkbenchByID(ctx, wb.ID)
	if err != nil || len(wb.GPUs) != 1 {
		t.Fatalf("running workbench: %v, GPUs %v", err, wb.GPUs)
	}
	return &memRig{m: m, rt: rt, store: store, wb: wb}
}

// assertStopped: record stopped, container exited or gone, GPU free,
// meter closed.
func (r *memRig) assertStopped(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(time.Minute)
	for {
		wb, err := r.store.WorkbenchByID(ctx, r.wb.ID)
		if err != nil {
			t.Fatal(err)
		}
		if wb.State == models.StateStopped {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("workbench is %s (stop error %q), want stopped", wb.State, wb.StopError)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if c, ok := r.rt.Container("c-" + r.wb.ID); ok && c.Running {
		t.Errorf("container still running after the stop")
	}
	if wb, _ := r.store.WorkbenchByID(ctx, r.wb.ID); len(wb.GPUs) != 0 {
		t.Errorf("GPUs still bound: %v", wb.GPUs)
	}
	if _, err := r.store.OpenIntervalOf(ctx, r.wb.ID); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("usage interval still open (%v)", err)
	}
}

// In memory: a workbench left "stopping" by this process, its request dead
// before the stop did its work, is finished by the next reconciliation.
func TestMemReconcileFinishesAStopWhoseRequestDied(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	if err := r.store.SetWorkbenchState(ctx, r.wb.ID, models.StateStopping, 100, "", nil); err != nil {
		t.Fatal(err)
	}
	if err := r.m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	r.assertStopped(t)
}

// In memory: the request is cancelled while the engine is stopping the
// container; the stop completes all the same.
func TestMemStopCompletesWhenTheRequestIsCancelled(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	entered, release := make(chan struct{}, 1), make(chan struct{})
	r.rt.SetStopHook(func(context.Context, string) {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-release
	})
	reqCtx, cancel := context.WithCancel(context.Background())
	returned := make(chan error, 1)
	go func() { returned <- r.m.Stop(reqCtx, r.wb.ID, "") }()
	<-entered
	cancel()
	close(release)
	<-returned
	r.assertStopped(t)
}

// In memory: a launch left creating or starting with nothing driving it
// (the portal died) is finished by reconciliation. One whose container is
// gone (it never ran) runs to its end with the units it holds, as an
// accepted launch must (SPEC §3; it failed with "start it again" while one
// killed a moment later was resumed); one whose Jupyter ran and exited
// fails saying how it ended (TestMemUnwatchedLaunchFailureSaysWhy), its
// units released, its meter closed and the dead container removed.
func TestMemReconcileFinishesAbandonedCreatingAndStarting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		state     string
		container string // what is left of the container: "gone" or "exited"
	}{
		{models.StateCreating, "gone"},
		{models.StateCreating, "exited"},
		{models.StateStarting, "exited"},
		{models.StateStarting, "gone"},
	} {
		t.Run(tc.state+"/"+tc.container, func(t *testing.T) {
			t.Parallel()
			r := newMemRig(t)
			serveJupyterOn(t, r, answersJupyter)
			ctx := context.Background()
			cid := "c-" + r.wb.ID
			switch tc.container {
			case "gone":
				if err := r.rt.Remove(ctx, cid); err != nil {
					t.Fatal(err)
				}
			case "exited":
				if err := r.rt.Stop(ctx, cid, 0); err != nil {
					t.Fatal(err)
				}
			}
			if err := r.store.SetWorkbenchState(ctx, r.wb.ID, tc.state, 60, "", nil); err != nil {
				t.Fatal(err)
			}
			if r.m.isLaunching(r.wb.ID) {
				t.Fatal("the rig's workbench has a launch in progress")
			}
			if err := r.m.Reconcile(ctx); err != nil {
				t.Fatal(err)
			}
			if tc.container == "gone" {
				wb := r.waitState(t, r.wb.ID, models.StateRunning, models.StateFailed)
				if wb.State != models.StateRunning || len(wb.GPUs) == 0 || wb.ContainerID == "" || wb.ContainerID == cid {
					t.Fatalf("after reconciliation: %s %q, GPUs %v, container %q; want the launch finished in a new container", wb.State, wb.Reason, wb.GPUs, wb.ContainerID)
				}
				return
			}
			wb, err := r.store.WorkbenchByID(ctx, r.wb.ID)
			if err != nil {
				t.Fatal(err)
			}
			if want := "Jupyter exited while starting (exit code "; wb.State != models.StateFailed || !strings.Contains(wb.Reason, want) {
				t.Fatalf("after reconciliation: %s %q, want failed saying %q", wb.State, wb.Reason, want)
			}
			if len(wb.GPUs) != 0 {
				t.Errorf("GPUs still bound: %v", wb.GPUs)
			}
			if _, ok := r.rt.Container(cid); ok {
				t.Errorf("the dead container is still there")
			}
			if iv, err := r.store.OpenIntervalOf(ctx, r.wb.ID); !errors.Is(err, models.ErrNotFound) {
				t.Errorf("usage interval still open: %+v (%v)", iv, err)
			}
		})
	}
}
