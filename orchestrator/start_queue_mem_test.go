package orchestrator

import (
	"context"
	"errors"
	"testing"

	"workbench/models"
)

// In memory: a stopped workbench started with Queue on a full pool waits in
// the queue (free, with its reason) instead of being refused, and starts
// with its GPU when one frees; without Queue the same start is
// refused as before.
func TestMemStartWithQueueWaitsForAFreeGPU(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	bob := r.user(t, "bob")
	mine := r.running(t, bob, "mine")
	r.stop(t, mine.ID)
	held := r.fill(t, r.alice, LaunchRequest{})

	var refused *RefusedError
	if err := r.m.StartAs(ctx, mine.ID, bob, StartOptions{}); !errors.As(err, &refused) || refused.Code != "no_capacity" {
		t.Fatalf("start without queue on a full pool: %v, want no_capacity", err)
	}
	if err := r.m.StartAs(ctx, mine.ID, bob, StartOptions{Queue: true}); err != nil {
		t.Fatalf("start with queue on a full pool: %v", err)
	}
	queued := r.waitState(t, mine.ID, models.StateQueued)
	if queued.Reason != "waiting in the queue to start again" || queued.QueueExpiresAt == nil {
		t.Fatalf("queued with reason %q, expires %v", queued.Reason, queued.QueueExpiresAt)
	}
	if _, err := r.store.OpenIntervalOf(ctx, mine.ID); err == nil {
		t.Fatal("a start waiting in the queue is metered")
	}
	if err := r.m.Stop(ctx, held[2].ID, ""); err != nil { // a GPU frees
		t.Fatal(err)
	}
	running := r.waitState(t, mine.ID, models.StateRunning)
	if len(running.GPUs) != 1 {
		t.Fatalf("after the wait: GPUs %v, want its 1", running.GPUs)
	}
	if _, err := r.store.OpenIntervalOf(ctx, mine.ID); err != nil {
		t.Fatalf("the started run is not metered: %v", err)
	}
}

// In memory: with Queue, a start refused by a concurrency limit (its
// owner's other workbench holds the one GPU their quota allows) waits and
// starts when that one stops; a monthly GPU-hour limit does not pass by
// waiting, so it is refused even with Queue.
func TestMemStartWithQueueWaitsForTheOwnersOtherWorkbench(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	bob := r.user(t, "bob")
	first, second := r.running(t, bob, "first"), r.running(t, bob, "second")
	r.stop(t, second.ID)
	one := int64(1)
	if err := r.store.SetQuota(ctx, models.ScopeUser, bob.ID, models.Limits{MaxGPUs: &one}, "test"); err != nil {
		t.Fatal(err)
	}
	if err := r.m.StartAs(ctx, second.ID, bob, StartOptions{Queue: true}); err != nil {
		t.Fatalf("start with queue at the GPU limit: %v", err)
	}
	r.waitState(t, second.ID, models.StateQueued)
	r.stop(t, first.ID)
	r.waitState(t, second.ID, models.StateRunning)

	r.stop(t, second.ID)
	zero := int64(0)
	if err := r.store.SetQuota(ctx, models.ScopeUser, bob.ID, models.Limits{GPUHoursPerMonth: &zero}, "test"); err != nil {
		t.Fatal(err)
	}
	var refused *RefusedError
	if err := r.m.StartAs(ctx, second.ID, bob, StartOptions{Queue: true}); !errors.As(err, &refused) {
		t.Fatalf("start with queue past the monthly GPU hours: %v, want a refusal", err)
	}
	if w, _ := r.store.WorkbenchByID(ctx, second.ID); w.State != models.StateStopped {
		t.Fatalf("refused start left it %s", w.State)
	}
}

// running is a launch of u's that is running.
func (r *queueRig) running(t *testing.T, u *models.User, name string) *models.Workbench {
	t.Helper()
	return r.waitState(t, r.launch(t, u, name, LaunchRequest{}).ID, models.StateRunning)
}

// stop stops workbench id and waits until it is stopped.
func (r *queueRig) stop(t *testing.T, id string) {
	t.Helper()
	if err := r.m.Stop(context.Background(), id, ""); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, id, models.StateStopped)
}
