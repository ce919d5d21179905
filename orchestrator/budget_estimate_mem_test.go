package orchestrator

import (
	"context"
	"testing"
	"time"

	"workbench/models"
)

// A launch queued behind runs that their owner's monthly limit stops is
// told it starts then: a walk-through saw "Estimated start: unknown
// (nothing it waits for has a known end time)" on bob's launch while
// alice's workbench page said "your monthly limit is reached at 21:18
// UTC: it stops then".
func TestMemQueueEstimateCountsTheMonthlyLimitStop(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	r.m.billing.now = r.m.now // the budget's timer reads billing's clock
	// Early in a month, with none of alice's usage in it yet, so that the
	// stop falls in the month whatever day the test runs.
	if err := r.m.Stop(ctx, r.wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	now := r.m.now()
	r.advance(models.MonthStart(now).AddDate(0, 1, 2).Sub(now))
	// Alice holds all eight GPUs; no flavor or quota limits their runtime.
	runs := r.fill(t, r.alice, LaunchRequest{})
	r.waitState(t, r.launch(t, r.alice, "eighth", LaunchRequest{}).ID, models.StateRunning)
	hours := int64(24) // three hours of eight GPUs
	if err := r.store.SetQuota(ctx, models.ScopeUser, r.alice.ID, models.Limits{GPUHoursPerMonth: &hours}, "test"); err != nil {
		t.Fatal(err)
	}
	r.m.scheduleBudget(ctx, r.alice.ID)
	st, ok := r.m.budgets.stopOf(r.alice.ID)
	if !ok || st.at.IsZero() {
		t.Fatalf("alice's GPU-hours limit has no stop instant")
	}
	// The instant her workbench page shows is the one bob is told.
	shown := r.m.Deadlines(ctx, runs[0]).BudgetStopAt
	if !shown.Equal(st.at) || shown.Sub(r.m.now()) > 3*time.Hour+time.Minute || !shown.After(r.m.now()) {
		t.Fatalf("alice's page shows her limit reached at %s (now %s), want the timer's %s, about 3 h away", shown, r.m.now(), st.at)
	}

	waiting := r.launch(t, r.user(t, "bob"), "next", LaunchRequest{Queue: true})
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := r.store.WorkbenchByID(ctx, waiting.ID)
	if err != nil || got.State != models.StateQueued {
		t.Fatalf("bob's launch: %+v (%v), want queued behind alice's runs", got, err)
	}
	if got.EstimatedStart == nil || got.EstimatedStart.Sub(shown).Abs() > time.Second {
		t.Errorf("estimated start %v (%s), want %s, when alice's monthly limit stops her runs", got.EstimatedStart, got.QueueReason, shown)
	}
}
