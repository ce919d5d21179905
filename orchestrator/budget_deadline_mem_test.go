package orchestrator

import (
	"context"
	"testing"
	"time"

	"workbench/models"
)

// A running workbench's deadlines include the instant its owner's monthly
// budget runs out at the live rate (when the budget timer will stop it),
// beside the idle and runtime stops; none without a budget. A class's
// students saw only the idle deadline, hours away, and were stopped by
// the budget minutes later.
func TestMemDeadlinesIncludeTheBudgetStop(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	if d := r.m.Deadlines(ctx, r.wb); !d.BudgetStopAt.IsZero() {
		t.Fatalf("no budget, yet a budget stop at %s", d.BudgetStopAt)
	}
	budget := int64(1_000_000_000) // hours of the seeded rates, not seconds
	if err := r.store.SetQuota(ctx, models.ScopeUser, r.wb.OwnerID, models.Limits{BudgetPerMonthMicros: &budget}, "test"); err != nil {
		t.Fatal(err)
	}
	r.m.scheduleBudget(ctx, r.wb.OwnerID)
	want, reason, _, err := r.m.exhaustion(ctx, r.wb.OwnerID)
	if err != nil || want.IsZero() || reason == "" {
		t.Fatalf("exhaustion: %s %q %v; want an instant the budget runs out", want, reason, err)
	}
	d := r.m.Deadlines(ctx, r.wb)
	if !d.BudgetStopAt.Equal(want) || !d.BudgetStopAt.After(time.Now()) {
		t.Fatalf("budget stop %s, want the timer's instant %s", d.BudgetStopAt, want)
	}
	// The budget lifted: no budget stop any more.
	if err := r.store.SetQuota(ctx, models.ScopeUser, r.wb.OwnerID, models.Limits{}, "test"); err != nil {
		t.Fatal(err)
	}
	r.m.scheduleBudget(ctx, r.wb.OwnerID)
	if d := r.m.Deadlines(ctx, r.wb); !d.BudgetStopAt.IsZero() {
		t.Fatalf("budget lifted, yet a budget stop at %s", d.BudgetStopAt)
	}
}
