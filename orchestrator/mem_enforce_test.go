package orchestrator

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"workbench/models"
)

// A user whose month's spend reaches their budget has their running
// workbench stopped by the billing round, with the reason shown, and is
// told (workbench_stopped, as the budget's timer tells it: the round's
// stop told nobody); under the budget nothing is stopped.
func TestMemBillingRoundStopsAUserOverBudget(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	use, err := r.m.Billing().MonthUsage(ctx, r.wb.OwnerID)
	if err != nil {
		t.Fatal(err)
	}
	if use.AmountMicros <= 0 {
		t.Fatalf("a minute of a GPU workbench cost %d micros; the test needs a price", use.AmountMicros)
	}
	roomy := use.AmountMicros * 1000
	if err := r.store.SetQuota(ctx, models.ScopeUser, r.wb.OwnerID, models.Limits{BudgetPerMonthMicros: &roomy}, "test"); err != nil {
		t.Fatal(err)
	}
	r.m.BillAndEnforce(ctx)
	if wb := r.record(t); wb.State != models.StateRunning {
		t.Fatalf("stopped under budget: %s (%s)", wb.State, wb.Reason)
	}
	spent := use.AmountMicros // already reached
	if err := r.store.SetQuota(ctx, models.ScopeUser, r.wb.OwnerID, models.Limits{BudgetPerMonthMicros: &spent}, "test"); err != nil {
		t.Fatal(err)
	}
	budgetCulls := func() float64 { return testutil.ToFloat64(r.m.metrics.culls.WithLabelValues(CullBudget)) }
	if n := budgetCulls(); n != 0 {
		t.Fatalf("workbench_culls_total{reason=\"budget\"} = %v before any budget stop", n)
	}
	r.m.BillAndEnforce(ctx)
	r.assertStopped(t)
	if wb := r.record(t); !strings.Contains(wb.Reason, "budget") {
		t.Errorf("reason %q, want the budget named", wb.Reason)
	}
	if n := budgetCulls(); n != 1 {
		t.Errorf("workbench_culls_total{reason=\"budget\"} = %v after the budget stop, want 1", n)
	}
	notes, err := r.store.ListNotifications(ctx, r.wb.OwnerID, 10)
	if err != nil || len(notes) != 1 || !strings.HasPrefix(notes[0].Message, "Workbench "+r.wb.Name+": stopped: quota exceeded") {
		t.Errorf("the owner's notifications after the budget stop: %+v (%v), want one naming the workbench and the budget", notes, err)
	}
	// A second round finds nothing running: nothing more is counted.
	r.m.BillAndEnforce(ctx)
	if n := budgetCulls(); n != 1 {
		t.Errorf("workbench_culls_total{reason=\"budget\"} = %v after a round with nothing to stop, want 1", n)
	}
}
