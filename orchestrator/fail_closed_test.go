package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"workbench/models"
	"workbench/models/pricing"
)

// One interval the price list cannot price (a GPU model with no rate) no
// longer stops the billing pass: the intervals after it are billed, and the
// error names the one that failed.
func TestBillOnceContinuesPastAnUnpricedInterval(t *testing.T) {
	f := newBillFixture(t)
	// A run of a model nobody priced (the fixture's first interval of this
	// workbench is empty and settled), seen alive until 11:30.
	wbBad := f.open(at("10:00:00"))
	f.close(wbBad, at("10:00:00"))
	iv := &models.UsageInterval{WorkbenchID: wbBad, UserID: f.user.ID, GPUModel: "Unpriced X1", GPUCount: 1, CPUMilli: 1000, MemoryMiB: 1 * 1024, StartedAt: at("10:00:00")}
	if err := f.store.OpenInterval(f.ctx, iv); err != nil {
		t.Fatal(err)
	}
	if err := f.store.HeartbeatIntervals(f.ctx, []string{wbBad}, at("11:30:00")); err != nil {
		t.Fatal(err)
	}
	good := f.open(at("10:05:00"))
	f.close(good, at("10:15:00"))
	b := NewBilling(f.store, 0)
	b.now = func() time.Time { return at("11:30:00") }
	_, err := b.BillOnce(f.ctx)
	var up *UnpricedError
	if !errors.As(err, &up) || up.WorkbenchID != wbBad || !up.Open {
		t.Fatalf("BillOnce error %v; want an UnpricedError for %s", err, wbBad)
	}
	var secs int64
	for _, l := range f.statement(billDay, billDay.AddDate(0, 0, 1)) {
		if l.WorkbenchID == good && l.Resource == pricing.GPU {
			secs += l.Seconds
		}
	}
	if secs != 600 {
		t.Fatalf("the interval after the unpriced one was billed %d GPU-s, want 600", secs)
	}
}

// Budget enforcement that cannot compute a user's month (here: an interval
// nobody can price) is logged and counted, not skipped in silence.
func TestEnforcementErrorsAreCounted(t *testing.T) {
	f := newBillFixture(t)
	budget := int64(1_000_000)
	if err := f.store.SetQuota(f.ctx, models.ScopeUser, f.user.ID, models.Limits{BudgetPerMonthMicros: &budget}, "test"); err != nil {
		t.Fatal(err)
	}
	wb := f.open(time.Now().Add(-time.Minute))
	if err := f.store.CloseInterval(f.ctx, wb, time.Now(), "x"); err != nil {
		t.Fatal(err)
	}
	iv := &models.UsageInterval{WorkbenchID: wb, UserID: f.user.ID, GPUModel: "Unpriced X1", GPUCount: 1, CPUMilli: 1000, MemoryMiB: 1 * 1024, StartedAt: time.Now().Add(-time.Minute)}
	if err := f.store.OpenInterval(f.ctx, iv); err != nil {
		t.Fatal(err)
	}
	m := NewManager(f.store, nil, nil, "unit", Options{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	m.BillAndEnforce(f.ctx)
	errs := m.MoneyErrors()
	// The pass and the budget timer's recomputation both tried.
	if errs[moneyErrEnforcement] < 1 {
		t.Fatalf("money errors %v; want the enforcement error counted", errs)
	}
}

// A workbench whose metering cannot be recorded does not run unbilled: the
// open is retried, and when it keeps failing the workbench is stopped with
// a reason, the error counted and written to the audit log. A failure that
// passes on retry costs nothing.
func TestUnmeteredWorkbenchIsStopped(t *testing.T) {
	if testing.Short() {
		t.Skip("real engine")
	}
	f := newEngineFixture(t, nil, Options{})
	old := openBackoff
	openBackoff = 10 * time.Millisecond
	t.Cleanup(func() { openBackoff = old })

	var calls atomic.Int32
	f.m.openIntervalFn = func(ctx context.Context, iv *models.UsageInterval) error {
		if calls.Add(1) <= 2 {
			return errors.New("database is locked")
		}
		return f.store.OpenInterval(ctx, iv)
	}
	flaky := f.launch("flaky")
	f.waitRunning(flaky.ID)
	if _, err := f.store.OpenIntervalOf(f.ctx, flaky.ID); err != nil {
		t.Fatalf("after two failed tries, no open interval: %v", err)
	}

	f.m.openIntervalFn = func(context.Context, *models.UsageInterval) error { return errors.New("disk I/O error") }
	wb := f.launch("broken")
	deadline := time.Now().Add(3 * time.Minute)
	var got *models.Workbench
	for {
		var err error
		if got, err = f.store.WorkbenchByID(f.ctx, wb.ID); err != nil {
			t.Fatal(err)
		}
		if got.State == models.StateFailed || got.State == models.StateStopped {
			break
		}
		if got.State == models.StateRunning {
			t.Fatal("a workbench whose metering failed is running")
		}
		if time.Now().After(deadline) {
			t.Fatalf("stuck in %s", got.State)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(got.Reason, "could not record this workbench's usage") || !strings.Contains(got.Reason, "disk I/O error") {
		t.Fatalf("reason %q does not say why", got.Reason)
	}
	if _, err := f.docker.Inspect(f.ctx, "wb-"+f.installID+"-"+wb.ID); err == nil {
		t.Fatal("the unmetered workbench's container is still there")
	}
	if n := f.m.MoneyErrors()[moneyErrOpenInterval]; n != 1 {
		t.Fatalf("open_interval errors counted: %d, want 1", n)
	}
	audit, err := f.store.ListAudit(f.ctx, 20)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, a := range audit {
		if a.Action == "billing.error.open_interval" && a.Target == wb.ID && strings.Contains(a.After, "disk I/O error") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no audit entry for the metering failure: %+v", audit)
	}
}

// A billing or enforcement pass that the portal's shutdown cuts short is
// not a money error (the next pass redoes it from the store): counting it
// raised workbench_money_errors_total at every restart that fell inside a
// pass. A real failure, and anything audited, still counts.
func TestShutdownIsNotAMoneyError(t *testing.T) {
	m := NewManager(nil, nil, nil, "unit", Options{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	stopped, stop := context.WithCancel(context.Background())
	stop()
	m.moneyError(stopped, moneyErrEnforcement, "user:1", fmt.Errorf("month: %w", context.Canceled), false)
	m.moneyError(stopped, moneyErrBilling, "wb", context.Canceled, false)
	if errs := m.MoneyErrors(); errs[moneyErrEnforcement] != 0 || errs[moneyErrBilling] != 0 {
		t.Errorf("a pass cut short by shutdown was counted: %v", errs)
	}
	m.moneyError(stopped, moneyErrBilling, "wb", errors.New("disk I/O error"), false)
	m.moneyError(context.Background(), moneyErrEnforcement, "user:1", context.Canceled, false)
	if errs := m.MoneyErrors(); errs[moneyErrBilling] != 1 || errs[moneyErrEnforcement] != 1 {
		t.Errorf("real failures not counted: %v", errs)
	}
}
