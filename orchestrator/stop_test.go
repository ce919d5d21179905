package orchestrator

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"workbench/models"
	"workbench/orchestrator/gpu"
	"workbench/orchestrator/runtime"
)

// lifecycleRig is a manager on the real engine with simulated DGX H100 GPUs,
// a real SQLite file, the fake Jupyter image as "fake" and one user.
type lifecycleRig struct {
	m      *Manager
	store  *models.Store
	cli    *client.Client
	owner  *models.User
	flavor string // a one-GPU flavor
}

// newLifecycleRig builds the rig; wrap (optional) puts a test double around
// the real engine, as stuckVolumes does.
func newLifecycleRig(t *testing.T, wrap func(runtime.Runtime) runtime.Runtime) *lifecycleRig {
	t.Helper()
	return newLifecycleRigWithGPUs(t, wrap, nil, nil)
}

// newLifecycleRigWithGPUs is newLifecycleRig over a given inventory and
// sampler (nil: the plain DGX H100 mock, no sampler).
func newLifecycleRigWithGPUs(t *testing.T, wrap func(runtime.Runtime) runtime.Runtime, inv gpu.Inventory, sampler *gpu.Sampler) *lifecycleRig {
	t.Helper()
	if testing.Short() {
		t.Skip("real-engine test: skipped under -short (make test runs it)")
	}
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	eng := newRealEngine(t, log, "stoptest")
	var err error
	if inv == nil {
		inv, err = gpu.New(gpu.Mode{Kind: gpu.KindMock, Mock: "dgxh100"})
		if err != nil {
			t.Fatal(err)
		}
	}
	devs, err := inv.Devices(ctx)
	if err != nil || len(devs) == 0 {
		t.Fatalf("mock GPUs: %v (%d)", err, len(devs))
	}
	gpuModels := []string{devs[0].Model}
	store := eng.store(t, log, gpuModels)
	if err := store.SeedCatalog(ctx, gpuModels); err != nil {
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
	flavor := ""
	for _, f := range fls {
		if f.GPUCount == 1 && flavor == "" {
			flavor = f.Name
		}
	}
	if flavor == "" {
		t.Fatalf("no one-GPU flavor seeded: %+v", fls)
	}
	m := NewManager(store, NewPool(inv, sampler, store), eng.runtime(wrap), eng.installID, Options{StopGrace: 5 * time.Second}, log)
	t.Cleanup(m.Wait)
	return &lifecycleRig{m: m, store: store, cli: eng.cli, owner: owner, flavor: flavor}
}

// launchRunning launches a one-GPU fake-Jupyter workbench and waits (on the
// record, generously) until it runs.
func (r *lifecycleRig) launchRunning(t *testing.T, name string) *models.Workbench {
	t.Helper()
	wb, err := r.m.Launch(context.Background(), r.owner, LaunchRequest{Name: name, Image: "fake", Flavor: r.flavor})
	if err != nil {
		t.Fatalf("launch: %v", err)
	}
	return r.waitState(t, wb.ID, models.StateRunning)
}

// waitState polls the record until it is in state want (failed ends it).
func (r *lifecycleRig) waitState(t *testing.T, id, want string) *models.Workbench {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		wb, err := r.store.WorkbenchByID(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if wb.State == want {
			return wb
		}
		if wb.State == models.StateFailed {
			t.Fatalf("workbench failed: %s", wb.Reason)
		}
		if time.Now().After(deadline) {
			t.Fatalf("workbench is %s (stop error %q) after 2 min, want %s", wb.State, wb.StopError, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// assertFullyStopped checks what a finished stop means, each against its
// source of truth: the record says stopped, the engine shows no running
// container, no GPU is bound to it and its usage interval is closed.
func (r *lifecycleRig) assertFullyStopped(t *testing.T, id string) {
	t.Helper()
	ctx := context.Background()
	wb := r.waitState(t, id, models.StateStopped)
	if wb.StopError != "" {
		t.Errorf("stopped workbench keeps stop error %q", wb.StopError)
	}
	info, err := r.cli.ContainerInspect(ctx, r.m.containerName(id))
	switch {
	case client.IsErrNotFound(err):
	case err != nil:
		t.Fatalf("inspect container: %v", err)
	case info.State.Running:
		t.Errorf("the container still runs after the stop (state %s)", info.State.Status)
	}
	allocs, err := r.store.GPUAllocations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for uuid, holder := range allocs {
		if holder == id {
			t.Errorf("GPU %s is still bound to the stopped workbench", uuid)
		}
	}
	if iv, err := r.store.OpenIntervalOf(ctx, id); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("usage interval still open after the stop (%v, %+v)", err, iv)
	}
}

// gatedStop is the real engine, except that Stop waits for release after
// telling entered, so a test can act while a stop is in flight.
type gatedStop struct {
	runtime.Runtime
	entered chan struct{}
	release chan struct{}
}

func (g *gatedStop) Stop(ctx context.Context, id string, grace time.Duration) error {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	<-g.release
	return g.Runtime.Stop(ctx, id, grace)
}

// The request that asked for a stop dies mid-way (a page reload aborted the
// POST): the stop still completes. The old stop worked under the request's
// context, so the engine call, the metering close and the GPU release all
// failed with "context canceled" and the workbench stayed "stopping" with
// its container up and its GPUs bound.
func TestStopCompletesWhenTheRequestIsCancelled(t *testing.T) {
	gate := &gatedStop{entered: make(chan struct{}, 1), release: make(chan struct{})}
	r := newLifecycleRig(t, func(rt runtime.Runtime) runtime.Runtime { gate.Runtime = rt; return gate })
	wb := r.launchRunning(t, "cut-stop")

	reqCtx, cancel := context.WithCancel(context.Background())
	returned := make(chan error, 1)
	go func() { returned <- r.m.Stop(reqCtx, wb.ID, "") }()
	select {
	case <-gate.entered:
	case <-time.After(time.Minute):
		t.Fatal("the stop never reached the engine")
	}
	cancel() // the client goes away while the engine is stopping the container
	close(gate.release)
	select {
	case err := <-returned:
		t.Logf("Stop returned to the cancelled caller: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("Stop did not return to its cancelled caller")
	}
	r.assertFullyStopped(t, wb.ID)
}

// A workbench left "stopping" by this very process with nothing driving it
// (its request died before the stop began its work, or the stop failed) is
// finished by the next reconciliation. The old reconciliation only finished
// stops recorded before the process started.
func TestReconcileFinishesAStopNobodyDrives(t *testing.T) {
	r := newLifecycleRig(t, nil)
	wb := r.launchRunning(t, "orphan-stop")
	ctx := context.Background()
	if err := r.store.SetWorkbenchState(ctx, wb.ID, models.StateStopping, 100, "", nil); err != nil {
		t.Fatal(err)
	}
	if err := r.m.Reconcile(ctx); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	r.assertFullyStopped(t, wb.ID)
}

// failingStop is the real engine, except that Stop fails while failing is
// set (an engine that times out).
type failingStop struct {
	runtime.Runtime
	failing atomic.Bool
}

func (f *failingStop) Stop(ctx context.Context, id string, grace time.Duration) error {
	if f.failing.Load() {
		return errors.New("engine timed out")
	}
	return f.Runtime.Stop(ctx, id, grace)
}

// A stop the engine refuses is not reported as done: the workbench stays
// stopping with the reason recorded (the page offers retry and force), its
// GPUs and meter stay on, and reconciliation finishes it once the engine
// answers again.
func TestFailedStopIsRecordedThenFinishedByReconciliation(t *testing.T) {
	fs := &failingStop{}
	r := newLifecycleRig(t, func(rt runtime.Runtime) runtime.Runtime { fs.Runtime = rt; return fs })
	wb := r.launchRunning(t, "stubborn")
	ctx := context.Background()

	fs.failing.Store(true)
	err := r.m.Stop(ctx, wb.ID, "")
	var se *StopError
	if !errors.As(err, &se) {
		t.Fatalf("Stop with a failing engine returned %v, want a StopError", err)
	}
	got, _ := r.store.WorkbenchByID(ctx, wb.ID)
	if got.State != models.StateStopping || got.StopError == "" || got.Progress == 100 {
		t.Fatalf("after a failed stop: state %s, progress %d, stop error %q; want stopping, not 100, with the error", got.State, got.Progress, got.StopError)
	}
	if len(got.GPUs) != 1 {
		t.Errorf("GPUs released although the container may still run: %v", got.GPUs)
	}
	if _, err := r.store.OpenIntervalOf(ctx, wb.ID); err != nil {
		t.Errorf("meter closed although the container may still run: %v", err)
	}
	// Still failing: reconciliation tries and keeps the record honest.
	if err := r.m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.store.WorkbenchByID(ctx, wb.ID); got.State != models.StateStopping || got.StopError == "" {
		t.Fatalf("after a failing reconciliation: state %s, stop error %q", got.State, got.StopError)
	}
	fs.failing.Store(false)
	if err := r.m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	r.assertFullyStopped(t, wb.ID)
}

// Force stop gets a workbench out of a stop the engine refuses: it kills,
// and when even that fails removes the container.
func TestForceStopRemovesAContainerThatWillNotStop(t *testing.T) {
	fs := &failingStop{}
	r := newLifecycleRig(t, func(rt runtime.Runtime) runtime.Runtime { fs.Runtime = rt; return fs })
	wb := r.launchRunning(t, "forced")
	fs.failing.Store(true)
	if err := r.m.Stop(context.Background(), wb.ID, ""); err == nil {
		t.Fatal("Stop with a failing engine succeeded")
	}
	if err := r.m.ForceStop(context.Background(), wb.ID, ""); err != nil {
		t.Fatalf("force stop: %v", err)
	}
	r.assertFullyStopped(t, wb.ID)
	if _, err := r.cli.ContainerInspect(context.Background(), r.m.containerName(wb.ID)); !client.IsErrNotFound(err) {
		t.Errorf("force stop left the container (inspect: %v)", err)
	}
}

// A deletion whose request is gone before the manager even begins still
// happens: container removed, record deleted, meter closed.
func TestDeleteCompletesWhenTheRequestIsCancelled(t *testing.T) {
	r := newLifecycleRig(t, nil)
	wb := r.launchRunning(t, "cut-delete")
	ctx := context.Background()
	if err := r.m.Stop(ctx, wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	reqCtx, cancel := context.WithCancel(ctx)
	cancel()
	err := r.m.Delete(reqCtx, wb.ID, r.owner, false)
	t.Logf("Delete returned to the cancelled caller: %v", err)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, err := r.store.WorkbenchByID(ctx, wb.ID)
		if errors.Is(err, models.ErrNotFound) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("workbench still there 2 min after a cut delete (%v)", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := r.cli.ContainerInspect(ctx, r.m.containerName(wb.ID)); !client.IsErrNotFound(err) {
		t.Errorf("the deleted workbench's container remains (inspect: %v)", err)
	}
}
