package orchestrator

import (
	"context"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// In memory, on an injected clock: a running workbench whose usage the
// price list cannot price keeps running through two billing passes (a rate
// may be being fixed) and is stopped on the third, with a reason that says
// why, an audit entry for admins and the money-errors counter raised.
func TestMemUnpricedWorkbenchIsStoppedAfterThreePasses(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	open, err := r.store.OpenIntervalOf(ctx, r.wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	start := open.StartedAt
	// The clock stands 2 h 20 min after the start: two whole hours are due.
	now := start.Add(140 * time.Minute)
	r.m.billing.now = func() time.Time { return now }

	// The workbench's meter now holds a GPU model nobody priced, seen
	// alive at now: the hours due cannot be priced.
	if err := r.store.CloseInterval(ctx, r.wb.ID, start, "test: reopen unpriced"); err != nil {
		t.Fatal(err)
	}
	iv := &models.UsageInterval{WorkbenchID: r.wb.ID, UserID: r.wb.OwnerID, GPUModel: "Unpriced X1", GPUCount: 1,
		UnitKind: models.UnitGPU, CPUMilli: 1000, MemoryMiB: 1024, StartedAt: start}
	if err := r.store.OpenInterval(ctx, iv); err != nil {
		t.Fatal(err)
	}
	if err := r.store.HeartbeatIntervals(ctx, []string{r.wb.ID}, now); err != nil {
		t.Fatal(err)
	}

	stillRunning := func(pass int) {
		t.Helper()
		wb, err := r.store.WorkbenchByID(ctx, r.wb.ID)
		if err != nil {
			t.Fatal(err)
		}
		if wb.State != models.StateRunning {
			t.Fatalf("after %d unpriced pass(es) the workbench is %s (%q); want it still running", pass, wb.State, wb.Reason)
		}
		if c, ok := r.rt.Container("c-" + r.wb.ID); !ok || !c.Running {
			t.Fatalf("after %d unpriced pass(es) the container is not running", pass)
		}
	}
	for pass := 1; pass <= 2; pass++ {
		r.m.BillAndEnforce(ctx)
		now = now.Add(time.Minute)
		if err := r.store.HeartbeatIntervals(ctx, []string{r.wb.ID}, now); err != nil {
			t.Fatal(err)
		}
		stillRunning(pass)
	}
	// Each failing pass is counted, but nothing was stopped for it yet.
	if n := r.m.MoneyErrors()[moneyErrBilling]; n != 2 {
		t.Fatalf("billing errors after 2 passes: %d, want 2", n)
	}
	if a := unpricedAudit(t, r); a != nil {
		t.Fatalf("an audit entry for a stop before the third pass: %+v", a)
	}

	r.m.BillAndEnforce(ctx)
	r.assertStopped(t)
	wb, err := r.store.WorkbenchByID(ctx, r.wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(wb.Reason, "could not record this workbench's usage") || !strings.Contains(wb.Reason, "Unpriced X1") {
		t.Fatalf("reason %q does not say why", wb.Reason)
	}
	// The third pass's error, plus the one the stop is counted and audited
	// as (the stop's own closing pass may count the interval once more).
	if n := r.m.MoneyErrors()[moneyErrBilling]; n < 4 {
		t.Fatalf("billing errors after the stop: %d, want at least %d", n, 4)
	}
	a := unpricedAudit(t, r)
	if a == nil {
		t.Fatal("no audit entry for the workbench stopped unpriced")
	}
	if !strings.Contains(a.After, "Unpriced X1") {
		t.Fatalf("audit entry %+v does not carry the error", a)
	}
}

// unpricedAudit is the audit entry written for r's workbench stopped
// because its usage could not be priced (nil: none).
func unpricedAudit(t *testing.T, r *memRig) *models.AuditEntry {
	t.Helper()
	audit, err := r.store.ListAudit(context.Background(), 50)
	if err != nil {
		t.Fatal(err)
	}
	for i := range audit {
		if audit[i].Action == "billing.error."+moneyErrBilling && audit[i].Target == r.wb.ID {
			return &audit[i]
		}
	}
	return nil
}
