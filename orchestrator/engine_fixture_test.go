package orchestrator

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"workbench/internal/testsupport/testimages"
	"workbench/models"
	"workbench/orchestrator/gpu"
	"workbench/orchestrator/runtime"
)

// engineFixture is a manager on the real Docker engine with a real SQLite
// store, a user, the fake Jupyter image and a small CPU flavor. Nothing
// runs in the background unless the test calls Run.
type engineFixture struct {
	t         *testing.T
	ctx       context.Context
	cli       *client.Client
	docker    *runtime.Docker
	store     *models.Store
	m         *Manager
	user      *models.User
	installID string
	log       *slog.Logger
}

func newEngineFixture(t *testing.T, wrap func(runtime.Runtime) runtime.Runtime, opt Options) *engineFixture {
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	eng := newRealEngine(t, log, "mt")
	store := eng.store(t, log, nil)
	if err := store.CreateFlavor(ctx, &models.Flavor{Name: "cpu", CPUMilli: 500, MemoryMiB: 1 * 1024, ShmMiB: 64, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	u, err := store.CreateUser(ctx, models.NewUser{Username: "alice", Password: "correct-horse-1"})
	if err != nil {
		t.Fatal(err)
	}
	inv, err := gpu.New(gpu.Mode{Kind: gpu.KindNone})
	if err != nil {
		t.Fatal(err)
	}
	m := NewManager(store, NewPool(inv, nil, store), eng.runtime(wrap), eng.installID, opt, log)
	t.Cleanup(m.Wait)
	return &engineFixture{t: t, ctx: ctx, cli: eng.cli, docker: eng.docker, store: store, m: m, user: u, installID: eng.installID, log: log}
}

// realEngine is what every real-engine fixture of this package starts
// from: the Docker runtime and a raw client (closed at the end), the fake
// Jupyter image, and an install id whose containers, volumes, networks and
// egress rules are removed at the end.
type realEngine struct {
	docker    *runtime.Docker
	cli       *client.Client
	fakeRef   string
	installID string
}

// newRealEngine connects to the engine and builds the fake Jupyter image;
// prefix starts the install id.
func newRealEngine(t *testing.T, log *slog.Logger, prefix string) *realEngine {
	t.Helper()
	ctx := context.Background()
	docker, err := runtime.NewDocker(runtime.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { docker.Close() })
	if err := docker.Ping(ctx); err != nil {
		t.Fatalf("this test needs the Docker engine: %v", err)
	}
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	ref, err := testimages.FakeJupyter(ctx, cli)
	if err != nil {
		t.Fatalf("build the fake Jupyter image: %v", err)
	}
	installID := prefix + strconv.FormatInt(time.Now().UnixNano(), 36)
	cleanupEngineInstall(t, cli, installID)
	return &realEngine{docker: docker, cli: cli, fakeRef: ref, installID: installID}
}

// store opens a real SQLite store in a temporary directory with the
// default prices for gpuModels and the fake image as "fake".
func (e *realEngine) store(t *testing.T, log *slog.Logger, gpuModels []string) *models.Store {
	t.Helper()
	ctx := context.Background()
	store := openStore(t, log)
	if err := store.SeedDefaultPrices(ctx, gpuModels); err != nil {
		t.Fatal(err)
	}
	if err := store.CreateImage(ctx, &models.Image{Name: "fake", Image: e.fakeRef, StartCommand: testimages.FakeJupyterStartCommand,
		RunAsUser: "1000", HomePath: testimages.FakeJupyterHome, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	return store
}

// runtime is the engine, wrapped by wrap when given (a test double
// around the real engine).
func (e *realEngine) runtime(wrap func(runtime.Runtime) runtime.Runtime) runtime.Runtime {
	if wrap != nil {
		return wrap(e.docker)
	}
	return e.docker
}

// cleanupEngineInstall removes, at the end of the test, the containers,
// volumes and networks labelled with installID and the install's egress
// rules (and only those: the engine and the host's firewall are shared).
// A network left behind takes one of the engine's few address pools for
// good: a few dozen leaked ones and no new network can be made.
func cleanupEngineInstall(t *testing.T, cli *client.Client, installID string) {
	t.Cleanup(func() {
		ctx := context.Background()
		f := filters.NewArgs(filters.Arg("label", runtime.LabelInstall+"="+installID))
		cs, _ := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
		for _, c := range cs {
			_ = cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true})
		}
		vs, _ := cli.VolumeList(ctx, volume.ListOptions{Filters: f})
		for _, v := range vs.Volumes {
			_ = cli.VolumeRemove(ctx, v.Name, true)
		}
		ns, _ := cli.NetworkList(ctx, network.ListOptions{Filters: f})
		for _, n := range ns {
			_ = cli.NetworkRemove(ctx, n.ID)
		}
		_ = runtime.NewFirewall(slog.New(slog.DiscardHandler)).Remove(ctx, installID)
	})
}

// launch starts a workbench of the fake image and waits until it runs.
func (f *engineFixture) launch(name string) *models.Workbench {
	f.t.Helper()
	wb, err := f.m.Launch(f.ctx, f.user, LaunchRequest{Name: name, Image: "fake", Flavor: "cpu"})
	if err != nil {
		f.t.Fatalf("launch %s: %v", name, err)
	}
	return wb
}

// waitRunning polls the record until the workbench runs (generous: the
// machine is shared and busy).
func (f *engineFixture) waitRunning(id string) *models.Workbench {
	f.t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		wb, err := f.store.WorkbenchByID(f.ctx, id)
		if err != nil {
			f.t.Fatal(err)
		}
		if wb.State == models.StateRunning {
			return wb
		}
		if wb.State == models.StateFailed {
			f.t.Fatalf("workbench %s failed: %s", id, wb.Reason)
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("workbench %s stuck in %s", id, wb.State)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// testWriter sends log lines to the test log (go test -v).
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }
