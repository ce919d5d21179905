package orchestrator

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// A preempted workbench is stopped: its owner can reset the home (the
// reset was refused with "stop p2 first", and Stop does nothing to a
// preempted workbench).
func TestMemHomeResetWithAPreemptedWorkbench(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	owner, err := r.store.UserByID(ctx, r.wb.OwnerID)
	if err != nil {
		t.Fatal(err)
	}
	home := r.m.homeVolume(owner.Username)
	if _, err := r.rt.EnsureVolume(ctx, home, nil); err != nil {
		t.Fatal(err)
	}
	if err := r.rt.Exit("c-"+r.wb.ID, 0, false); err != nil {
		t.Fatal(err)
	}
	if err := r.store.SetWorkbenchState(ctx, r.wb.ID, models.StatePreempted, 100, "preempted", nil); err != nil {
		t.Fatal(err)
	}
	if err := r.m.ResetHome(ctx, owner); err != nil {
		t.Fatalf("reset with only a preempted workbench: %v", err)
	}
	if r.rt.HasVolume(home) {
		t.Error("the home volume is still there")
	}
}

// slowVolumeRemoval is an engine that takes its time to delete a volume.
type slowVolumeRemoval struct {
	runtime.Runtime
	*gate
}

func (s *slowVolumeRemoval) RemoveVolume(ctx context.Context, name string) error {
	s.hold()
	return s.Runtime.RemoveVolume(ctx, name)
}

// A Start while the home is being reset is refused (it started on a home
// the reset then deleted, or on one the engine made unprepared, and the
// reset still said it was done).
func TestMemStartDuringAHomeResetIsRefused(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	owner, err := r.store.UserByID(ctx, r.wb.OwnerID)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.m.Stop(ctx, r.wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := r.rt.EnsureVolume(ctx, r.m.homeVolume(owner.Username), nil); err != nil {
		t.Fatal(err)
	}
	slow := &slowVolumeRemoval{Runtime: r.rt, gate: newGate()}
	// (A start that is not refused waits for a Jupyter that never answers:
	// a short ready timeout ends it, so the old behaviour fails fast.)
	m := NewManager(r.store, r.m.pool, slow, "memtest", Options{ReadyTimeout: 5 * time.Second}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(m.Wait)
	reset := make(chan error, 1)
	go func() { reset <- m.ResetHome(ctx, owner) }()
	slow.arrived(t, "the reset reaching the volume's removal")
	startErr := m.Start(ctx, r.wb.ID, owner)
	slow.open()
	if err := <-reset; err != nil {
		t.Fatalf("reset: %v", err)
	}
	var es *ErrState
	if !errors.As(startErr, &es) {
		t.Fatalf("a start during the reset: %v, want it refused", startErr)
	}
	if wb, _ := r.store.WorkbenchByID(ctx, r.wb.ID); wb.State != models.StateStopped {
		t.Errorf("the workbench is %s after the refused start", wb.State)
	}
}
