package orchestrator

import (
	"context"
	"log/slog"
	"strings"
	"testing"
)

// Saving a running workbench as an image pauses its container (docker
// commit does, while it reads the files): the portal's own pause. A
// reconciliation during the save (the engine's pause event starts one)
// took it for a pause outside the portal, and every save logged
// "reconcile: workbench container unpaused" once it ended. It is neither
// recorded nor logged now.
func TestMemSaveImageOwnPauseIsNotAPauseOutside(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	owner, err := r.store.UserByID(ctx, r.wb.OwnerID)
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	m := NewManager(r.store, r.m.pool, r.rt, "memtest", Options{}, slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(m.Wait)
	var midSave bool
	r.rt.SetCommitHook(func(ctx context.Context, id string) {
		c, err := r.rt.Inspect(ctx, id)
		if err != nil || !c.Paused {
			t.Errorf("mid-save the container is not paused: %+v %v", c, err)
		}
		if err := m.Reconcile(ctx); err != nil {
			t.Error(err)
		}
		wb, err := r.store.WorkbenchByID(ctx, r.wb.ID)
		if err != nil || wb.PausedAt != nil {
			t.Errorf("mid-save the workbench is marked paused (%v): %v", wb.PausedAt, err)
		}
		midSave = true
	})
	if _, err := m.SaveImage(ctx, r.wb.ID, owner, SaveImageRequest{Name: "env", RunningOK: true}); err != nil {
		t.Fatal(err)
	}
	if !midSave {
		t.Fatal("the save did not commit")
	}
	if err := m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	m.Wait()
	if out := logs.String(); strings.Contains(out, "paused outside the portal") || strings.Contains(out, "unpaused") {
		t.Errorf("the portal's own pause was logged as one outside it:\n%s", out)
	}
}

// A look at the container taken during a save's pause that has ended by
// the time it is judged is still the portal's pause; one taken after it
// is not.
func TestOwnPauseMark(t *testing.T) {
	m := &Manager{}
	before := m.ownPauseMark("w")
	done := m.pauseOwn("w")
	if !m.pausedByPortal("w", before) || !m.pausedByPortal("w", m.ownPauseMark("w")) {
		t.Fatal("a pause under way is not the portal's")
	}
	done()
	if !m.pausedByPortal("w", before) {
		t.Error("a look taken before a pause that has ended since is not the portal's")
	}
	if m.pausedByPortal("w", m.ownPauseMark("w")) || m.pausedByPortal("other", m.ownPauseMark("other")) {
		t.Error("a look taken after the pause is still the portal's")
	}
}
