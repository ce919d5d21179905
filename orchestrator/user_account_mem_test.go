package orchestrator

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// A renamed account keeps its home volume (it is named by the home key,
// the name the account was made with) and is told of the rename. Deleted
// afterwards, and the process gone before it reached the engine (the
// request died right after the commit), the next reconciliation finishes
// the work: the running container is killed and removed, the workbench
// deleted with its meter closed and its GPUs free, the home volume under
// the old name removed, and the account recorded erased.
func TestMemDeletedAccountIsErasedByReconciliation(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	home := r.m.homeVolume("alice")
	if _, err := r.rt.EnsureVolume(ctx, home, r.m.labels("", "alice")); err != nil {
		t.Fatal(err)
	}
	owner, err := r.store.UserByID(ctx, r.wb.OwnerID)
	if err != nil {
		t.Fatal(err)
	}
	if renamed, err := r.m.RenameUser(ctx, "root", owner, "alicia"); err != nil || !renamed || owner.Username != "alicia" {
		t.Fatalf("rename: %v %v (%q)", renamed, err, owner.Username)
	}
	if info, err := r.m.Home(ctx, owner); err != nil || info.Volume != home {
		t.Fatalf("after the rename the home is %q (%v), want the volume made as alice's, %q", info.Volume, err, home)
	}
	notes, err := r.store.ListNotifications(ctx, owner.ID, 10)
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0].Message, "from alice to alicia") {
		t.Fatalf("the renamed user's notifications: %+v (%v)", notes, err)
	}

	d, err := r.m.DeleteUser(ctx, "root", owner)
	if err != nil || d.Workbenches != 1 {
		t.Fatalf("delete: %+v (%v)", d, err)
	}
	if c, ok := r.rt.Container("c-" + r.wb.ID); !ok || !c.Running {
		t.Fatal("the test means the engine's part not to have run yet")
	}

	// The next process reconciles.
	if err := r.m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.rt.Container("c-" + r.wb.ID); ok {
		t.Error("the deleted account's container is still there")
	}
	if _, err := r.store.WorkbenchByID(ctx, r.wb.ID); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("the deleted account's workbench is still there: %v", err)
	}
	if r.rt.HasVolume(home) {
		t.Error("the deleted account's home volume is still there")
	}
	ivs, err := r.store.IntervalsOf(ctx, r.wb.ID)
	if err != nil || len(ivs) != 1 || ivs[0].EndedAt == nil {
		t.Errorf("meter: %+v (%v), want its interval closed", ivs, err)
	}
	if held, err := r.store.GPUAllocations(ctx); err != nil || len(held) != 0 {
		t.Errorf("GPUs still held: %v (%v)", held, err)
	}
	tomb, err := r.store.UserByID(ctx, owner.ID)
	if err != nil || tomb.ErasedAt == nil || tomb.Username != models.TombstoneName(owner.ID) {
		t.Fatalf("tombstone after reconciliation: %+v (%v)", tomb, err)
	}
	if pending, err := r.store.PendingUserErasures(ctx); err != nil || len(pending) != 0 {
		t.Errorf("erasures still pending: %v (%v)", pending, err)
	}
}

// An account deleted outside the portal's manager (the command line's
// `workbench user delete`, which has the database and no engine) while the
// portal runs: the running portal's periodic reconciliation finds the
// tombstone and removes the account's running container and home volume,
// without a restart and without anyone calling EraseUser. The command line
// renames too, and the user is told who did it.
func TestMemAccountDeletedOutsideThePortalIsErasedWhileItRuns(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	home := r.m.homeVolume("alice")
	if _, err := r.rt.EnsureVolume(ctx, home, r.m.labels("", "alice")); err != nil {
		t.Fatal(err)
	}
	r.m.opt.ReconcileEvery = 20 * time.Millisecond
	r.m.UseFirewall(&recordingFirewall{})
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan struct{})
	go func() { r.m.Run(runCtx); close(ran) }()
	t.Cleanup(func() { stop(); <-ran })
	waitFor(t, func() bool { held, _ := r.m.LeaseStatus(); return held })
	// The start's own reconciliation has passed: what follows is the
	// periodic one's.
	if c, ok := r.rt.Container("c-" + r.wb.ID); !ok || !c.Running {
		t.Fatal("the running portal lost the workbench before the test began")
	}

	outside := NewAccounts(r.store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	owner, err := r.store.UserByID(ctx, r.wb.OwnerID)
	if err != nil {
		t.Fatal(err)
	}
	if renamed, err := outside.Rename(ctx, CommandLine, owner, "alicia"); err != nil || !renamed {
		t.Fatalf("rename: %v %v", renamed, err)
	}
	notes, err := r.store.ListNotifications(ctx, owner.ID, 10)
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0].Message, "renamed your account from alice to alicia on the server's command line") {
		t.Fatalf("the renamed user's notifications: %+v (%v)", notes, err)
	}
	if _, err := outside.Delete(ctx, CommandLine, owner); err != nil {
		t.Fatal(err)
	}

	waitFor(t, func() bool {
		tomb, err := r.store.UserByID(ctx, owner.ID)
		return err == nil && tomb.ErasedAt != nil
	})
	if _, ok := r.rt.Container("c-" + r.wb.ID); ok {
		t.Error("the deleted account's container is still there")
	}
	if r.rt.HasVolume(home) {
		t.Error("the deleted account's home volume is still there")
	}
	if _, err := r.store.WorkbenchByID(ctx, r.wb.ID); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("the deleted account's workbench is still there: %v", err)
	}
	if held, err := r.store.GPUAllocations(ctx); err != nil || len(held) != 0 {
		t.Errorf("GPUs still held: %v (%v)", held, err)
	}
}

// A queued launch of an account deleted from the command line (the
// database alone: the running portal's reconciliation removes the
// account's workbenches at its next pass) is not started by a queue pass
// that comes first: the GPU that frees goes to the launch behind it.
func TestMemQueuePassSkipsADeletedAccountsLaunch(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	bob := r.user(t, "bob")
	gone, freeOne := r.queuedBehindAFullPool(t, bob)
	next := r.launch(t, r.alice, "next", LaunchRequest{Queue: true})
	if next.State != models.StateQueued {
		t.Fatalf("the launch behind bob's is %s", next.State)
	}
	outside := NewAccounts(r.store, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if _, err := outside.Delete(ctx, CommandLine, bob); err != nil {
		t.Fatal(err)
	}
	freeOne()
	r.waitState(t, next.ID, models.StateRunning)
	if wb, err := r.store.WorkbenchByID(ctx, gone.ID); err == nil && wb.State != models.StateQueued {
		t.Fatalf("the deleted account's queued launch is %s", wb.State)
	}
}
