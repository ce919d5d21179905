package orchestrator

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"workbench/models"
	"workbench/models/pricing"
)

// A budget stops a running workbench at the instant it runs out, not at
// the next billing pass (default 60 s; the audit measured +27% over
// budget). The overshoot — what was charged past the budget — is measured
// in seconds of the workbench's charge and logged, with how far the
// container's exit (the engine's time, which the ledger bills) lay past
// the exhaustion instant. The bound is one second: the stop is fired just
// after the last second that fits has begun, so the engine has that whole
// second to stop the container before one more is charged.
//
// The assertion is on the billed overshoot, which is what money truth
// means: the ledger charges ⌈exit − start⌉ from the engine's timestamps, so
// "charged at most one second of the rate past the budget" is the same as
// "the container exited within 1 s of the exhaustion instant" — measured
// on the engine's clock, not on this process's scheduling of the check.
func TestBudgetStopsAtTheInstant(t *testing.T) {
	if testing.Short() {
		t.Skip("real engine")
	}
	f := newEngineFixture(t, nil, Options{MinCharge: -1})
	// A costly CPU (1.00 per core-second: 0.50 a second for the flavor's
	// half core) makes a budget of 4.25 last about 8.5 s: the limit falls
	// inside a second.
	if err := f.store.AddPriceRate(f.ctx, &models.PriceRate{Resource: pricing.CPU, Micros: 3_600_000_000, CreatedBy: "test"}); err != nil {
		t.Fatal(err)
	}
	budget := int64(4_250_000)
	if err := f.store.SetQuota(f.ctx, models.ScopeUser, f.user.ID, models.Limits{BudgetPerMonthMicros: &budget}, "test"); err != nil {
		t.Fatal(err)
	}
	// Not waiting for "running": on a slow machine the budget may run out
	// before Jupyter answers (charging starts when the container starts).
	wb := f.launch("budget")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		got, err := f.store.WorkbenchByID(f.ctx, wb.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State == models.StateStopped {
			t.Logf("stopped: %s", got.Reason)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %s two minutes after launch with a budget of about 8 s", got.State)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The counter moves once Stop has returned, a moment after the record
	// says stopped (seen under load: read at once, it was still 0).
	culls := func() float64 { return testutil.ToFloat64(f.m.metrics.culls.WithLabelValues(CullBudget)) }
	for culls() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := culls(); n != 1 {
		t.Errorf("workbench_culls_total{reason=\"budget\"} = %v after the timer's stop, want 1", n)
	}
	// Its owner is told, just after the stop.
	waitFor(t, func() bool {
		ns, err := f.store.ListNotifications(f.ctx, f.user.ID, 10)
		return err == nil && len(ns) == 1 && strings.HasPrefix(ns[0].Message, "Workbench budget: stopped: quota exceeded: the monthly budget is used up")
	})
	if _, err := f.m.Billing().BillOnce(f.ctx); err != nil {
		t.Fatal(err)
	}
	month, err := f.store.MonthTotals(f.ctx, f.user.ID, models.MonthStart(time.Now()))
	charged := month.AmountMicros
	if err != nil {
		t.Fatal(err)
	}
	ivs, err := f.store.IntervalsOf(f.ctx, wb.ID)
	if err != nil || len(ivs) != 1 || ivs[0].EndedAt == nil {
		t.Fatalf("intervals %+v (%v); want one, closed", ivs, err)
	}
	perSecond := pricing.Amount(3_600_000_000, 500, 1, false) + pricing.Amount(5_000, 1000, 1, false)
	over := float64(charged-budget) / float64(perSecond)
	// The exhaustion instant as the ledger counts it: the last moment at
	// which the run's charged seconds still fit the budget.
	fit := budget / perSecond
	exhausted := ivs[0].StartedAt.Add(time.Duration(fit) * time.Second)
	late := ivs[0].EndedAt.Sub(exhausted)
	t.Logf("budget %d, charged %d over %s of run (%d s fit): overshoot %.2f s of charge (%+.1f%% of the budget); the container exited %s after the exhaustion instant",
		budget, charged, ivs[0].EndedAt.Sub(ivs[0].StartedAt).Round(time.Millisecond), fit, over,
		100*float64(charged-budget)/float64(budget), late.Round(time.Millisecond))
	if over > 1 {
		t.Fatalf("overshoot %.2f s of charge past the budget (exit %s after the exhaustion instant); want at most 1 s", over, late)
	}
	if charged <= budget-perSecond {
		t.Fatalf("stopped %.2f s of charge before the budget ran out", -over)
	}
}

// A credit makes the month's spending negative; with a budget near int64's
// top (stored before budgets were bounded) the difference wrapped around
// and the budget read as spent.
func TestBudgetLeftDoesNotWrap(t *testing.T) {
	for _, tc := range []struct{ budget, spent, want int64 }{
		{math.MaxInt64, -11_800_000, math.MaxInt64},
		{10_000_000, -2_500_000, 12_500_000},
		{10_000_000, 4_000_000, 6_000_000},
		{10_000_000, 12_000_000, -2_000_000},
	} {
		if got := budgetLeft(tc.budget, tc.spent); got != tc.want {
			t.Errorf("budgetLeft(%d, %d) = %d, want %d", tc.budget, tc.spent, got, tc.want)
		}
	}
}
