package orchestrator

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// A copy of an install started with --new-identity holds records of the
// original's running workbenches. Their containers are the original's and
// run on; the copy closes its records at their last heartbeat, saying
// so — not "the container disappeared", which told owners their work was
// lost — and tells nobody (no "workbench_stopped" notice: the workbench
// runs on in the original).
func TestMemNewIdentityClosesCopiedRunsWithTheirOwnReason(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	id, err := r.store.NewInstallID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	iv, err := r.store.OpenIntervalOf(ctx, r.wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The copy's manager: same data, same engine, its own install id.
	var logs lockedBuffer
	clone := NewManager(r.store, r.m.pool, r.rt, id, Options{}, slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(clone.Wait)
	if err := clone.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	clone.Wait()
	wb, err := r.store.WorkbenchByID(ctx, r.wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := "this copy of the install does not manage the original's containers (started with --new-identity)"
	if wb.State != models.StateStopped || wb.Reason != want {
		t.Fatalf("the copied run: %s, reason %q; want stopped, %q", wb.State, wb.Reason, want)
	}
	if wb.StoppedAt == nil || !wb.StoppedAt.Equal(iv.HeartbeatAt) {
		t.Errorf("the copied run closed at %v, want its last heartbeat %v", wb.StoppedAt, iv.HeartbeatAt)
	}
	// The log says what happened: a run copied from the original, not an
	// exit the engine forgot.
	if out := logs.String(); strings.Contains(out, "no longer knows the exit") || strings.Contains(out, "container gone") ||
		!strings.Contains(out, "a run copied from the original install") {
		t.Errorf("the copy's log of the copied run:\n%s", out)
	}
	if c, ok := r.rt.Container("c-" + r.wb.ID); !ok || !c.Running {
		t.Errorf("the original's container was touched: %+v (found %v)", c, ok)
	}
	notes, err := r.store.ListNotifications(ctx, wb.OwnerID, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range notes {
		if strings.Contains(n.Message, wb.Name) {
			t.Errorf("the owner was told: %q", n.Message)
		}
	}
}

// A run the copy started itself (after its new identity) whose container
// vanishes is told as before: the container disappeared.
func TestMemNewIdentityKeepsDisappearedForItsOwnRuns(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	id, err := r.store.NewInstallID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().UTC().Add(time.Minute)
	if err := r.store.SetWorkbenchState(ctx, r.wb.ID, models.StateRunning, 100, "", map[string]any{"started_at": later}); err != nil {
		t.Fatal(err)
	}
	clone := NewManager(r.store, r.m.pool, r.rt, id, Options{}, r.m.log)
	t.Cleanup(clone.Wait)
	if err := clone.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	clone.Wait()
	wb, err := r.store.WorkbenchByID(ctx, r.wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if wb.State != models.StateStopped || wb.Reason != "the container disappeared" {
		t.Fatalf("the copy's own run: %s, reason %q; want stopped, the container disappeared", wb.State, wb.Reason)
	}
}
