package models

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A launch whose minimum charge the rest of the budget cannot cover is
// refused with a message that names both amounts; one it can cover goes.
// Before, only a budget already spent refused, so a run launched with 0.10
// left was charged its full minimum of 0.50.
func TestCheckLaunchQuotaRefusesWhatTheMinimumChargeWouldOverrun(t *testing.T) {
	f := newMoneyFixture(t)
	ctx := context.Background()
	if err := f.s.SetQuota(ctx, ScopeUser, f.user.ID, Limits{BudgetPerMonthMicros: i64(1_000_000)}, "admin"); err != nil {
		t.Fatal(err)
	}
	launch := func(name string, spent, minCharge int64) error {
		wb := &Workbench{Name: name, OwnerID: f.user.ID, ImageID: f.wb.ImageID, FlavorID: f.wb.FlavorID, Token: "t"}
		ask := LaunchAsk{UserID: f.user.ID, Image: "Test", Flavor: "cpu", MinChargeMicros: minCharge, MinChargeSecs: 60}
		return f.s.CreateWorkbench(ctx, wb, GPUNeed{}, CheckLaunchQuota(ask, MonthUsage{AmountMicros: spent}))
	}
	err := launch("short", 900_000, 500_000)
	var qe *QuotaError
	if !errors.As(err, &qe) || qe.Limit != "budget_per_month_micros" {
		t.Fatalf("0.10 left, minimum 0.50: %v; want budget_per_month_micros", err)
	}
	for _, want := range []string{"0.10 left", "minimum charge of 0.50", "60 s"} {
		if !strings.Contains(qe.Message, want) {
			t.Errorf("message %q lacks %q", qe.Message, want)
		}
	}
	// In the currency's decimals, what is left rounded down and what is
	// owed rounded up ("0.005159 CNY left … 0.282176 CNY" read like raw
	// micro-units), and never "0.00 left cannot cover a minimum charge of
	// 0.00", which told nobody anything.
	// Both under a cent are written exact: rounded, they read "the < 0.01
	// left cannot cover a minimum charge of 0.01".
	err = launch("tiny", 999_200, 1_334)
	if !errors.As(err, &qe) || !strings.Contains(qe.Message, "the 0.0008 left") || !strings.Contains(qe.Message, "minimum charge of 0.001334 (") {
		t.Errorf("0.0008 left, minimum 0.001334: %v", err)
	}
	// Less than a cent left of a minimum of a cent or more: the budget is
	// used up ("the < 0.01 left of your monthly budget cannot cover …"),
	// the sliver written to the micro-unit as the banner writes what is
	// left ("less than 0.01 is left" beside a banner's "0.000005 left").
	err = launch("spent", 999_995, 500_000)
	if want := "quota exceeded: your monthly budget is used up (only 0.000005 is left; this flavor's minimum charge is 0.50)"; !errors.As(err, &qe) || qe.Message != want {
		t.Errorf("0.000005 left, minimum 0.50: %v; want %q", err, want)
	}
	err = launch("edge", 720_000, 282_176)
	if !errors.As(err, &qe) || !strings.Contains(qe.Message, "the 0.28 left") || !strings.Contains(qe.Message, "minimum charge of 0.29 (") {
		t.Errorf("0.28 left, minimum 0.282176: %v", err)
	}
	// With the portal's currency the amounts say what they are in.
	ask := LaunchAsk{UserID: f.user.ID, Image: "Test", Flavor: "cpu", MinChargeMicros: 500_000, MinChargeSecs: 60, Currency: "CNY"}
	err = f.s.CreateWorkbench(ctx, &Workbench{Name: "cny", OwnerID: f.user.ID, ImageID: f.wb.ImageID, FlavorID: f.wb.FlavorID, Token: "t"},
		GPUNeed{}, CheckLaunchQuota(ask, MonthUsage{AmountMicros: 900_000}))
	if !errors.As(err, &qe) || !strings.Contains(qe.Message, "the 0.10 CNY left") || !strings.Contains(qe.Message, "minimum charge of 0.50 CNY") {
		t.Errorf("in CNY: %v", err)
	}
	if err := launch("exact", 500_000, 500_000); err != nil {
		t.Fatalf("0.50 left, minimum 0.50: %v", err)
	}
	if err := launch("nomin", 900_000, 0); err != nil {
		t.Fatalf("no minimum charge, budget not spent: %v", err)
	}
}

// A launch of whole GPUs whose minimum charge in GPU-seconds the rest of
// the monthly GPU-hours cannot cover is refused (it ran 48 ms, was stopped
// by the limit and was counted 60 GPU-seconds past it); one it can cover
// goes, and a MIG launch is bounded by the budget, not GPU-hours.
func TestCheckLaunchQuotaRefusesWhatTheMinimumGPUSecondsWouldOverrun(t *testing.T) {
	f := newMoneyFixture(t)
	ctx := context.Background()
	if err := f.s.SetQuota(ctx, ScopeUser, f.user.ID, Limits{GPUHoursPerMonth: i64(2)}, "admin"); err != nil {
		t.Fatal(err)
	}
	launch := func(name string, used int64, gpus int, kind string) error {
		wb := &Workbench{Name: name, OwnerID: f.user.ID, ImageID: f.wb.ImageID, FlavorID: f.wb.FlavorID, Token: "t"}
		ask := LaunchAsk{UserID: f.user.ID, Image: "Test", Flavor: "cpu", GPUs: gpus, Kind: kind, MinChargeSecs: 60}
		return f.s.CreateWorkbench(ctx, wb, GPUNeed{}, CheckLaunchQuota(ask, MonthUsage{GPUSeconds: used}))
	}
	var qe *QuotaError
	if err := launch("short", 7198, 1, ""); !errors.As(err, &qe) || qe.Limit != "gpu_hours_per_month" ||
		!strings.Contains(qe.Message, "2 GPU-seconds are left of your monthly 2 GPU-hours, fewer than this launch's minimum of 60") {
		t.Fatalf("2 GPU-seconds left, one GPU: %v", err)
	}
	if err := launch("four", 7000, 4, UnitGPU); !errors.As(err, &qe) || !strings.Contains(qe.Message, "minimum of 240") {
		t.Fatalf("200 GPU-seconds left, four GPUs: %v", err)
	}
	if err := launch("fits", 7140, 1, ""); err != nil {
		t.Fatalf("60 GPU-seconds left, one GPU: %v", err)
	}
	if err := launch("mig", 7198, 1, UnitMIG); err != nil {
		t.Fatalf("a MIG instance with 2 GPU-seconds left: %v", err)
	}
}
