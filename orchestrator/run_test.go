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
	"github.com/docker/docker/client"

	"workbench/internal/testsupport/testimages"
	"workbench/orchestrator/gpu"
	"workbench/orchestrator/runtime"
)

// stuckVolumes is the real engine, except that measuring volumes never
// answers (as `docker system df` can take many seconds on a busy engine:
// it walks every volume and, before API 1.42, every container's layer).
type stuckVolumes struct{ runtime.Runtime }

func (stuckVolumes) VolumeSizes(ctx context.Context, _ string) ([]runtime.VolumeUsage, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// A slow duty must not hold up the others: with storage metering stuck,
// periodic reconciliation still removes an orphan once its grace is over.
// (A CI run once saw an orphan outlive its grace by 10 s because all
// duties shared one loop.)
func TestRunDutiesDoNotWaitForEachOther(t *testing.T) {
	if testing.Short() {
		t.Skip("real-engine test: skipped under -short (make test runs it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	docker, err := runtime.NewDocker(runtime.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	defer docker.Close()
	if err := docker.Ping(ctx); err != nil {
		t.Fatalf("this test needs the Docker engine: %v", err)
	}
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ref, err := testimages.FakeJupyter(ctx, cli)
	if err != nil {
		t.Fatal(err)
	}

	store := openStore(t, log)
	inv, err := gpu.New(gpu.Mode{Kind: gpu.KindNone})
	if err != nil {
		t.Fatal(err)
	}
	installID := "runtest" + strconv.FormatInt(time.Now().UnixNano(), 36)
	t.Cleanup(func() {
		f := filters.NewArgs(filters.Arg("label", runtime.LabelInstall+"="+installID))
		cs, _ := cli.ContainerList(context.Background(), container.ListOptions{All: true, Filters: f})
		for _, c := range cs {
			_ = cli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true})
		}
	})

	const grace = time.Second
	m := NewManager(store, NewPool(inv, nil, store), stuckVolumes{docker}, installID, Options{
		ReconcileEvery: 200 * time.Millisecond,
		OrphanGrace:    grace,
		StorageEvery:   100 * time.Millisecond,
	}, log)

	// Created, never started: reconciliation removes orphans whatever
	// their state.
	orphan, err := cli.ContainerCreate(ctx, &container.Config{
		Image: ref, Cmd: []string{"/fakejupyter"},
		Labels: map[string]string{
			runtime.LabelInstall: installID,
			runtime.LabelID:      "nosuchworkbench",
			runtime.LabelOwner:   "nobody",
			runtime.LabelKind:    runtime.KindWorkbench,
		},
	}, nil, nil, nil, "wb-"+installID+"-orphan")
	if err != nil {
		t.Fatal(err)
	}
	created := time.Now()

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { m.Run(runCtx); close(done) }()
	defer func() {
		stop()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("Run did not return 10 s after its context ended")
		}
	}()

	deadline := created.Add(grace + 5*time.Second)
	for {
		_, err := cli.ContainerInspect(ctx, orphan.ID)
		if client.IsErrNotFound(err) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("orphan still there %s after its creation (grace %s, reconcile every 200ms) while storage metering is stuck",
				time.Since(created).Round(time.Millisecond), grace)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
