package orchestrator

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"workbench/models"
	"workbench/orchestrator/gpu"
	"workbench/orchestrator/runtime"
)

// memRuntime is an engine in memory: containers are records that Stop marks
// exited. It runs no process and answers no HTTP, so it suits the parts of
// the lifecycle that only look at container state (stop, reconciliation),
// and runs where no Docker engine is. A Stop honours its context as the
// real engine client does: a cancelled context fails the call.
type memRuntime struct {
	mu         sync.Mutex
	containers map[string]*runtime.ContainerInfo // by id
	// stopEntered/stopRelease, when set, hold Stop until released.
	stopEntered chan struct{}
	stopRelease chan struct{}
}

func newMemRuntime() *memRuntime {
	return &memRuntime{containers: map[string]*runtime.ContainerInfo{}}
}

// run adds a running container.
func (r *memRuntime) run(id, name string, labels map[string]string, started time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.containers[id] = &runtime.ContainerInfo{ID: id, Name: name, Labels: labels, State: "running", Running: true,
		StartedAt: started, Created: started, IPs: map[string]string{}}
}

func (r *memRuntime) find(ref string) *runtime.ContainerInfo {
	if c, ok := r.containers[ref]; ok {
		return c
	}
	for _, c := range r.containers {
		if c.Name == ref || strings.TrimPrefix(c.Name, "/") == ref {
			return c
		}
	}
	return nil
}

func (r *memRuntime) Ping(ctx context.Context) error          { return ctx.Err() }
func (r *memRuntime) HasNVIDIA(context.Context) (bool, error) { return false, nil }
func (r *memRuntime) EnsureVolume(context.Context, string, map[string]string) (bool, error) {
	return false, nil
}
func (r *memRuntime) RemoveVolume(context.Context, string) error                     { return nil }
func (r *memRuntime) EnsureNetwork(context.Context, string, map[string]string) error { return nil }
func (r *memRuntime) NetworkBridge(context.Context, string) (string, error) {
	return "", runtime.ErrNotFound
}
func (r *memRuntime) Endpoint(runtime.ContainerInfo, string) (string, int) { return "", 0 }
func (r *memRuntime) EnsureImage(context.Context, string, func(int, string)) error {
	return errors.New("memRuntime: no images")
}
func (r *memRuntime) VolumeSizes(context.Context, string) ([]runtime.VolumeUsage, error) {
	return nil, nil
}
func (r *memRuntime) Create(context.Context, runtime.Spec) (string, error) {
	return "", errors.New("memRuntime: cannot create containers")
}
func (r *memRuntime) Start(context.Context, string) error {
	return errors.New("memRuntime: cannot start containers")
}
func (r *memRuntime) Logs(context.Context, string, int, bool) (io.ReadCloser, error) {
	return io.NopCloser(strings.NewReader("")), nil
}

func (r *memRuntime) Stop(ctx context.Context, id string, _ time.Duration) error {
	if r.stopEntered != nil {
		select {
		case r.stopEntered <- struct{}{}:
		default:
		}
		<-r.stopRelease
	}
	if err := ctx.Err(); err != nil {
		return err // as the Docker client does with a cancelled request
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.find(id)
	if c == nil {
		return runtime.ErrNotFound
	}
	if c.Running {
		c.Running, c.State, c.ExitCode, c.FinishedAt = false, "exited", 0, time.Now().UTC()
	}
	return nil
}

func (r *memRuntime) Remove(_ context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.find(id); c != nil {
		delete(r.containers, c.ID)
	}
	return nil
}

func (r *memRuntime) Inspect(ctx context.Context, id string) (runtime.ContainerInfo, error) {
	if err := ctx.Err(); err != nil {
		return runtime.ContainerInfo{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.find(id)
	if c == nil {
		return runtime.ContainerInfo{}, runtime.ErrNotFound
	}
	return *c, nil
}

func (r *memRuntime) List(ctx context.Context, installID string) ([]runtime.ContainerInfo, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []runtime.ContainerInfo
	for _, c := range r.containers {
		if c.Labels[runtime.LabelInstall] == installID {
			out = append(out, *c)
		}
	}
	return out, nil
}

func (r *memRuntime) Events(ctx context.Context, _ string) (<-chan runtime.Event, <-chan error) {
	evs, errs := make(chan runtime.Event), make(chan error, 1)
	go func() {
		<-ctx.Done()
		close(evs)
		close(errs)
	}()
	return evs, errs
}

var _ runtime.Runtime = (*memRuntime)(nil)

// memRig is a manager on memRuntime with simulated GPUs and a real SQLite
// file, holding one running one-GPU workbench (record, GPU, open meter,
// container) made without a launch.
type memRig struct {
	m     *Manager
	rt    *memRuntime
	store *models.Store
	wb    *models.Workbench
}

func newMemRig(t *testing.T) *memRig {
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := models.Open(ctx, t.TempDir(), log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
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
	rt := newMemRuntime()
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
	rt.run("c-"+wb.ID, m.containerName(wb.ID), m.labels(wb.ID, owner.Username), started)
	if err := store.SetWorkbenchState(ctx, wb.ID, models.StateRunning, 100, "", map[string]any{"container_id": "c-" + wb.ID}); err != nil {
		t.Fatal(err)
	}
	m.openInterval(ctx, wb.ID, started)
	wb, err = store.WorkbenchByID(ctx, wb.ID)
	if err != nil || len(wb.GPUs) != 1 {
		t.Fatalf("running workbench: %v, GPUs %v", err, wb.GPUs)
	}
	return &memRig{m: m, rt: rt, store: store, wb: wb}
}

// assertStopped: record stopped, container exited, GPU free, meter closed.
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
	if c, err := r.rt.Inspect(ctx, "c-"+r.wb.ID); err != nil || c.Running {
		t.Errorf("container after the stop: running %v (%v)", c.Running, err)
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
	r := newMemRig(t)
	r.rt.stopEntered, r.rt.stopRelease = make(chan struct{}, 1), make(chan struct{})
	reqCtx, cancel := context.WithCancel(context.Background())
	returned := make(chan error, 1)
	go func() { returned <- r.m.Stop(reqCtx, r.wb.ID, "") }()
	<-r.rt.stopEntered
	cancel()
	close(r.rt.stopRelease)
	<-returned
	r.assertStopped(t)
}

// The image and home methods below are not used by the lifecycle tests
// that run on memRuntime; they answer like an engine with no such object.
func (r *memRuntime) PullImage(context.Context, string, func(runtime.PullProgress)) error {
	return errors.New("memRuntime: no images")
}
func (r *memRuntime) ImageSize(context.Context, string) (bool, int64, error) { return false, 0, nil }
func (r *memRuntime) PrepareHome(context.Context, string, string, string) error {
	return nil
}
func (r *memRuntime) ResolveUser(context.Context, string, string) (int, int, error) {
	return 0, 0, runtime.ErrNotFound
}
func (r *memRuntime) ProcessUser(context.Context, string) (int, int, error) {
	return 0, 0, runtime.ErrNotFound
}
func (r *memRuntime) HomeOwner(context.Context, string, string) (int, int, int64, error) {
	return 0, 0, 0, runtime.ErrNotFound
}
func (r *memRuntime) CreateVolume(_ context.Context, name string, labels map[string]string) (runtime.VolumeInfo, error) {
	return runtime.VolumeInfo{}, errors.New("memRuntime: no volumes")
}
func (r *memRuntime) InspectVolume(context.Context, string) (runtime.VolumeInfo, error) {
	return runtime.VolumeInfo{}, runtime.ErrNotFound
}
func (r *memRuntime) LastExit(context.Context, string, string, time.Time) (time.Time, bool, error) {
	return time.Time{}, false, nil
}
