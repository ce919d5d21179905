package orchestrator

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// slowStart is an engine that takes its time to start a container: the
// start happens in the engine whether or not the caller still waits for
// the answer (as a Docker client's cancelled request does).
type slowStart struct {
	runtime.Runtime
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (s *slowStart) Start(ctx context.Context, id string) error {
	s.once.Do(func() { close(s.entered) })
	done := make(chan error, 1)
	go func() {
		<-s.release
		done <- s.Runtime.Start(context.Background(), id)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// A stop while the engine is still starting the container: when the stop
// reports stopped, the container is not running (nor starts afterwards on
// GPUs given to someone else, unmetered).
func TestMemStopDuringASlowStartLeavesNothingRunning(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	slow := &slowStart{Runtime: r.rt, entered: make(chan struct{}), release: make(chan struct{})}
	m := NewManager(r.store, r.m.pool, slow, "memtest", r.m.opt, slog.New(slog.NewTextHandler(io.Discard, nil)))
	m.SetClock(r.m.now)
	t.Cleanup(m.Wait)
	bob := r.user(t, "bob")
	wb, err := m.Launch(ctx, bob, LaunchRequest{Name: "slow", Image: "mem", Flavor: r.flavor})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-slow.entered:
	case <-time.After(time.Minute):
		t.Fatal("the launch never reached the container's start")
	}
	// The engine finishes the start a moment after the stop began.
	go func() {
		for !m.isLaunching(wb.ID) || !stopping(r.store, wb.ID) {
			time.Sleep(5 * time.Millisecond)
		}
		close(slow.release)
	}()
	if err := m.Stop(ctx, wb.ID, ""); err != nil {
		t.Fatalf("stop: %v", err)
	}
	got, err := r.store.WorkbenchByID(ctx, wb.ID)
	if err != nil || got.State != models.StateStopped || len(got.GPUs) != 0 {
		t.Fatalf("after the stop: %+v (%v)", got, err)
	}
	if c, ok := r.rt.Container(m.containerName(wb.ID)); ok && c.Running {
		t.Fatal("the container runs after the stop reported stopped, on GPUs the stop released")
	}
}

func stopping(s *models.Store, id string) bool {
	wb, err := s.WorkbenchByID(context.Background(), id)
	return err == nil && wb.State == models.StateStopping
}
