package orchestrator

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// stallingRemove is an engine whose Remove never returns while stalled: the
// portal process "dies" there, its container killed and its record not yet
// marked deleted.
type stallingRemove struct {
	runtime.Runtime
	*gate
}

func (s *stallingRemove) Remove(ctx context.Context, id string) error {
	s.hold()
	return errors.New("the process was killed")
}

// A delete cut short between killing the container and marking the record
// (kill -9 of the portal) is finished by the next process's reconciliation:
// the workbench is deleted, not left "stopped: the container exited", its
// meter ends at the container's exit, and the home volume asked for goes.
func TestMemDeleteCutShortIsFinishedByReconciliation(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	home := r.m.homeVolume("alice")
	if _, err := r.rt.EnsureVolume(ctx, home, nil); err != nil {
		t.Fatal(err)
	}
	owner, err := r.store.UserByID(ctx, r.wb.OwnerID)
	if err != nil {
		t.Fatal(err)
	}
	// The first process: its engine stalls in Remove, and the request that
	// asked for the delete goes away.
	stall := &stallingRemove{Runtime: r.rt, gate: newGate()}
	first := NewManager(r.store, r.m.pool, stall, "memtest", Options{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	reqCtx, cancel := context.WithCancel(ctx)
	go func() { _ = first.Delete(reqCtx, r.wb.ID, owner, true) }()
	stall.arrived(t, "the delete reaching the container's removal")
	cancel()
	t.Cleanup(func() { stall.open(); first.Wait() })
	c, ok := r.rt.Container("c-" + r.wb.ID)
	if !ok || c.Running || c.FinishedAt.IsZero() {
		t.Fatalf("the container should have been killed before its removal: %+v (found %v)", c, ok)
	}

	// The next process reconciles.
	if err := r.m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if wb, err := r.store.WorkbenchByID(ctx, r.wb.ID); !errors.Is(err, models.ErrNotFound) {
		t.Fatalf("after reconciliation the workbench is still there (%v): state %s, reason %q", err, wb.State, wb.Reason)
	}
	if _, ok := r.rt.Container("c-" + r.wb.ID); ok {
		t.Error("the container was not removed")
	}
	if r.rt.HasVolume(home) {
		t.Error("the home volume the owner asked to delete is still there")
	}
	ivs, err := r.store.IntervalsOf(ctx, r.wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ivs) != 1 || ivs[0].EndedAt == nil || !ivs[0].EndedAt.Equal(c.FinishedAt) {
		t.Fatalf("meter: %+v, want one interval ended at the container's exit %v", ivs, c.FinishedAt)
	}
	if pending, err := r.store.PendingDeletes(ctx); err != nil || len(pending) != 0 {
		t.Errorf("pending deletes after finishing: %+v (%v)", pending, err)
	}
}

// A delete the engine refuses is reported to the owner, who decides again:
// reconciliation does not carry it out later behind their back.
func TestMemDeleteRefusedByTheEngineIsNotFinishedLater(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	owner, err := r.store.UserByID(ctx, r.wb.OwnerID)
	if err != nil {
		t.Fatal(err)
	}
	r.rt.FailOnce("Remove", errors.New("engine timed out"))
	if err := r.m.Delete(ctx, r.wb.ID, owner, false); err == nil {
		t.Fatal("a delete whose container could not be removed was reported done")
	}
	if pending, err := r.store.PendingDeletes(ctx); err != nil || len(pending) != 0 {
		t.Fatalf("a refused delete is left pending: %+v (%v)", pending, err)
	}
	if err := r.m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.WorkbenchByID(ctx, r.wb.ID); err != nil {
		t.Fatalf("reconciliation deleted a workbench whose delete the owner was told failed: %v", err)
	}
}
