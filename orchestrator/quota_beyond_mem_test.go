package orchestrator

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// In memory: a queued launch that alone asks more GPUs than its owner may
// hold at once is refused at once (it could never start), not left in the
// queue "waiting for your other workbenches to stop"; one that fits once
// they stop still waits; a booking of more units than the quota allows at
// once is refused, one within it is booked.
func TestMemAskBeyondTheQuotaIsRefusedNotQueued(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	bob := r.user(t, "bob")
	one := int64(1)
	if err := r.store.SetQuota(ctx, models.ScopeUser, bob.ID, models.Limits{MaxGPUs: &one}, "admin"); err != nil {
		t.Fatal(err)
	}
	fls, err := r.store.ListFlavors(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	var two *models.Flavor
	for i := range fls {
		if fls[i].GPUCount == 2 && fls[i].UnitKind == models.UnitGPU {
			two = &fls[i]
		}
	}
	if two == nil {
		t.Fatal("no two-GPU flavor seeded")
	}

	_, err = r.m.Launch(ctx, bob, LaunchRequest{Name: "big", Image: "mem", Flavor: two.Name, Queue: true})
	var re *RefusedError
	if !errors.As(err, &re) || re.Code != "quota_exceeded" || re.Limit != "max_gpus" || re.Message != "your quota allows at most 1 GPU at once" {
		t.Fatalf("a queued launch of 2 GPUs with a quota of 1: %v, want refused (quota_exceeded, max_gpus)", err)
	}
	if wbs, err := r.store.ListWorkbenches(ctx, bob.ID); err != nil || len(wbs) != 0 {
		t.Fatalf("bob's workbenches after the refusal: %d (%v), want none", len(wbs), err)
	}

	first := r.launch(t, bob, "first", LaunchRequest{})
	r.waitState(t, first.ID, models.StateRunning)
	second := r.launch(t, bob, "second", LaunchRequest{Queue: true})
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.store.WorkbenchByID(ctx, second.ID); got.State != models.StateQueued || !strings.Contains(got.QueueReason, "waiting for your other workbenches to stop") {
		t.Fatalf("a launch that fits once his other stops: %s %q, want queued, waiting", got.State, got.QueueReason)
	} else if got.EstimatedStart != nil {
		// Nothing the queue knows says when his other stops (it has no
		// end time): no estimate, not one trailing the clock.
		t.Errorf("estimated start %v of a launch waiting for its owner's other workbench, want none", got.EstimatedStart)
	}

	start := r.m.now().Add(time.Hour)
	_, err = r.m.Reserve(ctx, bob, ReserveRequest{Model: two.GPUModel, Units: 2, Start: start, End: start.Add(time.Hour)})
	if !errors.As(err, &re) || re.Limit != "max_gpus" {
		t.Fatalf("a booking of 2 GPUs with a quota of 1: %v, want refused (max_gpus)", err)
	}
	if _, err := r.m.Reserve(ctx, bob, ReserveRequest{Model: two.GPUModel, Units: 1, Start: start, End: start.Add(time.Hour)}); err != nil {
		t.Fatalf("a booking of 1 GPU with a quota of 1: %v", err)
	}
}

// In memory: an administrator lowering a user's quota below the ask of
// their queued launch refuses that launch at once, with the reason and a
// notice, while the pool is still full (before, it held its place until
// capacity freed); a raise lets a launch held by the old limit start at
// once, without waiting for another drain.
func TestMemQuotaChangeActsOnTheQueueAtOnce(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	carol := r.user(t, "carol")
	wb, _ := r.queuedBehindAFullPool(t, carol)
	zero := int64(0)
	if err := r.m.SetQuota(ctx, QuotaChange{Actor: "admin", Scope: models.ScopeUser, SubjectID: carol.ID, Name: "carol",
		Limits: models.Limits{MaxGPUs: &zero}}); err != nil {
		t.Fatal(err)
	}
	got := r.waitState(t, wb.ID, models.StateFailed)
	if want := "refused while it waited: your quota allows at most 0 GPUs at once"; got.Reason != want {
		t.Fatalf("reason %q, want %q", got.Reason, want)
	}
	var ns []models.Notification
	waitFor(t, func() bool {
		ns, _ = r.store.ListNotifications(ctx, carol.ID, 10)
		return len(ns) > 0
	})
	if len(ns) != 1 || ns[0].Message != "Workbench later: "+got.Reason {
		t.Fatalf("carol's notifications %+v", ns)
	}

	// On a pool with room: dan holds one GPU and his second launch waits
	// on max_gpus 1; raising it to 2 starts the second at once.
	r = newQueueRig(t)
	dan := r.user(t, "dan")
	one, two := int64(1), int64(2)
	if err := r.m.SetQuota(ctx, QuotaChange{Actor: "admin", Scope: models.ScopeUser, SubjectID: dan.ID, Name: "dan",
		Limits: models.Limits{MaxGPUs: &one}}); err != nil {
		t.Fatal(err)
	}
	first := r.launch(t, dan, "first", LaunchRequest{})
	r.waitState(t, first.ID, models.StateRunning)
	second := r.launch(t, dan, "second", LaunchRequest{Queue: true})
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.store.WorkbenchByID(ctx, second.ID); got.State != models.StateQueued {
		t.Fatalf("dan's second launch with max_gpus 1: %s, want queued", got.State)
	}
	if err := r.m.SetQuota(ctx, QuotaChange{Actor: "admin", Scope: models.ScopeUser, SubjectID: dan.ID, Name: "dan",
		Limits: models.Limits{MaxGPUs: &two}}); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, second.ID, models.StateRunning)
}

// In memory: a workbench that has run, started again with the queue and
// refused while it waits, goes back to stopped with the reason — it read
// "failed", as if it had run and crashed — and its home stays; a launch
// that never ran is failed as before (TestMemQuotaChangeActsOnTheQueueAtOnce).
func TestMemRefusedRestartInTheQueueIsStopped(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	carol := r.user(t, "carol")
	mine := r.running(t, carol, "mine")
	r.stop(t, mine.ID)
	r.fill(t, r.alice, LaunchRequest{}) // the pool is full
	if err := r.m.StartAs(ctx, mine.ID, carol, StartOptions{Queue: true}); err != nil {
		t.Fatalf("start with the queue: %v", err)
	}
	r.waitState(t, mine.ID, models.StateQueued)
	zero := int64(0)
	if err := r.m.SetQuota(ctx, QuotaChange{Actor: "admin", Scope: models.ScopeUser, SubjectID: carol.ID, Name: "carol",
		Limits: models.Limits{MaxGPUs: &zero}}); err != nil {
		t.Fatal(err)
	}
	got := r.waitState(t, mine.ID, models.StateStopped, models.StateFailed)
	if got.State != models.StateStopped || got.Reason != "refused while it waited: your quota allows at most 0 GPUs at once" {
		t.Fatalf("refused restart: %s %q, want stopped with the reason", got.State, got.Reason)
	}
}
