package orchestrator

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/network"

	"workbench/orchestrator/runtime"
)

// slowNetwork is the real engine, except that the first EnsureNetwork is
// carried out by "the engine" only once release is closed, whether or not
// its caller still waits (as the Docker daemon finishes a create whose
// client gave up). entered gets the context the caller passed.
type slowNetwork struct {
	runtime.Runtime
	once    sync.Once
	entered chan context.Context
	release chan struct{}
}

func (s *slowNetwork) EnsureNetwork(ctx context.Context, name string, labels map[string]string) error {
	gated := false
	s.once.Do(func() { gated = true })
	if !gated {
		return s.Runtime.EnsureNetwork(ctx, name, labels)
	}
	s.entered <- ctx
	done := make(chan error, 1)
	go func() {
		<-s.release
		done <- s.Runtime.EnsureNetwork(context.Background(), name, labels)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// A launch cancelled by Shutdown while the engine makes the install's
// network waits for the engine's answer: the network exists when Shutdown
// returns, so whoever cleans up after it finds it. A caller that gave up
// at once let the engine make it afterwards (a test's cleanup left a
// network behind every time it cut a start half-way).
func TestShutdownWaitsForTheEngineToMakeTheNetwork(t *testing.T) {
	gate := &slowNetwork{entered: make(chan context.Context, 1), release: make(chan struct{})}
	r := newLifecycleRig(t, func(rt runtime.Runtime) runtime.Runtime { gate.Runtime = rt; return gate })
	ctx := context.Background()
	if _, err := r.cli.NetworkInspect(ctx, r.m.network(), network.InspectOptions{}); err == nil {
		if err := r.cli.NetworkRemove(ctx, r.m.network()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.m.Launch(ctx, r.owner, LaunchRequest{Name: "cut", Image: "fake", Flavor: r.flavor}); err != nil {
		t.Fatal(err)
	}
	var callCtx context.Context
	select {
	case callCtx = <-gate.entered:
	case <-time.After(2 * time.Minute):
		t.Fatal("the launch never asked for the network")
	}
	shut := make(chan bool, 1)
	go func() {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		shut <- r.m.Shutdown(sctx)
	}()
	waitFor(t, r.m.closing)
	if callCtx.Done() != nil {
		// The call can be given up: Shutdown ends the launch without the
		// engine's answer, and the engine makes the network afterwards.
		<-shut
		close(gate.release)
		t.Fatal("the network's create was given up when the launch was cancelled: the engine makes it after Shutdown returned")
	}
	close(gate.release)
	if ok := <-shut; !ok {
		t.Fatal("Shutdown did not end the launch")
	}
	if _, err := r.cli.NetworkInspect(ctx, r.m.network(), network.InspectOptions{}); err != nil {
		t.Fatalf("after Shutdown the install's network is not there: %v", err)
	}
}
