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

// The GPU-hours stop of a run in its first minute is when the limit is
// really spent: its minimum is counted in the month's GPU-seconds already
// and does not grow until it is used up. The deadline shown was early by
// what was left of the minimum (left / GPUs from now).
func TestMemGPUHoursStopOfAYoungRunIsNotEarly(t *testing.T) {
	t.Parallel()
	r, advance := clockedUnitRig(t)
	ctx := context.Background()
	hour := int64(1)
	if err := r.store.SetQuota(ctx, models.ScopeUser, r.owner.ID, models.Limits{GPUHoursPerMonth: &hour}, "test"); err != nil {
		t.Fatal(err)
	}
	// Early in a month, so that the hour fits in it whatever day it is.
	now := r.m.now()
	advance(models.MonthStart(now).AddDate(0, 1, 2).Sub(now))
	wb := r.launchRunning(t, "young", "whole")
	advance(10 * time.Second)
	open, err := r.store.OpenIntervals(ctx, r.owner.ID)
	if err != nil || len(open) != 1 {
		t.Fatalf("open intervals %v %v", open, err)
	}
	at, reason, scope, err := r.m.exhaustion(ctx, r.owner.ID)
	if err != nil || reason == "" || !scope.gpuOnly {
		t.Fatalf("exhaustion %s %q gpu-only %v: %v", at, reason, scope.gpuOnly, err)
	}
	// One GPU for an hour from the start: the limit is spent when its
	// 3600th second has begun; the stop lands inside that second.
	spent := open[0].StartedAt.Add(time.Hour)
	if at.Before(spent.Add(-time.Second)) || at.After(spent.Add(time.Second)) {
		t.Fatalf("workbench %s started %s: the GPU-hours stop is at %s, %s from the start; want about 1h0m0s",
			wb.ID, open[0].StartedAt.Format(time.RFC3339Nano), at.Format(time.RFC3339Nano), at.Sub(open[0].StartedAt))
	}
	// The budget the same way: two hours of the run's rate.
	scheds, err := r.store.Schedules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	perHour, err := r.m.billing.hourlyRate(shapeOf(open[0]), scheds)
	if err != nil || perHour <= 0 {
		t.Fatalf("rate %d: %v", perHour, err)
	}
	budget := 2 * perHour
	if err := r.store.SetQuota(ctx, models.ScopeUser, r.owner.ID, models.Limits{BudgetPerMonthMicros: &budget}, "test"); err != nil {
		t.Fatal(err)
	}
	at, reason, scope, err = r.m.exhaustion(ctx, r.owner.ID)
	if err != nil || reason == "" || scope.gpuOnly {
		t.Fatalf("budget exhaustion %s %q gpu-only %v: %v", at, reason, scope.gpuOnly, err)
	}
	// Per-line rounding moves it by a few seconds at most, not by the
	// 50 s of minimum left.
	spent = open[0].StartedAt.Add(2 * time.Hour)
	if at.Before(spent.Add(-5*time.Second)) || at.After(spent.Add(5*time.Second)) {
		t.Fatalf("the budget stop is %s from the start; want about 2h0m0s", at.Sub(open[0].StartedAt))
	}
}

// The GPU-hours limit counts whole GPUs only, as the launch check and the
// ledger's GPU-seconds do: a MIG instance or a slice held under a
// GPU-hours limit is given no "monthly limit is reached at …" stop (a
// class's MIG and slice runs were shown one an hour ahead that moved
// with the clock, while their GPU-hours bar read 0.00, and the queue's
// estimates waited for it). Beside a whole-GPU run, the stop is the whole
// run's hour and it stops that run only.
func TestMemGPUHoursLimitLeavesMIGAndSlicesOut(t *testing.T) {
	t.Parallel()
	r, advance := clockedUnitRig(t)
	ctx := context.Background()
	hour := int64(1)
	if err := r.store.SetQuota(ctx, models.ScopeUser, r.owner.ID, models.Limits{GPUHoursPerMonth: &hour}, "test"); err != nil {
		t.Fatal(err)
	}
	now := r.m.now()
	advance(models.MonthStart(now).AddDate(0, 1, 2).Sub(now))
	mig := r.launchRunning(t, "mig", "mig-1g")
	slice := r.launchRunning(t, "slice", "slice")
	advance(10 * time.Minute)
	if at, reason, _, err := r.m.exhaustion(ctx, r.owner.ID); err != nil || !at.IsZero() {
		t.Fatalf("MIG and slice runs only: a GPU-hours stop at %s (%q, %v); want none", at, reason, err)
	}
	r.m.scheduleBudget(ctx, r.owner.ID)
	for _, wb := range []*models.Workbench{mig, slice} {
		if d := r.m.Deadlines(ctx, wb); !d.BudgetStopAt.IsZero() {
			t.Fatalf("%s: the page forecasts a monthly-limit stop at %s", wb.Name, d.BudgetStopAt)
		}
	}

	whole := r.launchRunning(t, "whole", "whole")
	iv, err := r.store.OpenIntervalOf(ctx, whole.ID)
	if err != nil {
		t.Fatal(err)
	}
	at, reason, scope, err := r.m.exhaustion(ctx, r.owner.ID)
	if err != nil || reason == "" || !scope.gpuOnly {
		t.Fatalf("exhaustion %s %q gpu-only %v: %v", at, reason, scope.gpuOnly, err)
	}
	// One GPU for an hour: not a third of it, as three "GPUs" made it.
	spent := iv.StartedAt.Add(time.Hour)
	if at.Before(spent.Add(-time.Second)) || at.After(spent.Add(time.Second)) {
		t.Fatalf("the GPU-hours stop is %s after the whole-GPU run's start; want about 1h0m0s", at.Sub(iv.StartedAt))
	}
	r.m.scheduleBudget(ctx, r.owner.ID)
	if d := r.m.Deadlines(ctx, whole); !d.BudgetStopAt.Equal(at) {
		t.Fatalf("whole-GPU run: page's stop %s, want %s", d.BudgetStopAt, at)
	}
	for _, wb := range []*models.Workbench{mig, slice} {
		got, err := r.store.WorkbenchByID(ctx, wb.ID)
		if err != nil {
			t.Fatal(err)
		}
		if scope.stops(got) {
			t.Fatalf("%s (%s) would be stopped by the GPU-hours limit", wb.Name, got.Units[0].Kind)
		}
		if d := r.m.Deadlines(ctx, got); !d.BudgetStopAt.IsZero() {
			t.Fatalf("%s: the page forecasts a monthly-limit stop at %s", wb.Name, d.BudgetStopAt)
		}
	}
}
