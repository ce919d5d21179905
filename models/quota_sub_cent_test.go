package models

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"workbench/models/pricing"
)

// The figures of a refusal by the bookings' set-aside keep a sub-cent
// amount honest: an amount owed under a cent was rounded up to 0.01 and
// what was left rounded down, so a refusal read "your bookings would bill
// 0.01 USD …, and the rest of the < 0.01 USD left … cannot cover this
// flavor's minimum charge of 0.01 USD" (billing more than is left, and a
// rest of nothing). Where an amount owed is under a cent, every figure of
// the sentence is written to the micro-unit, as the minimum charge's
// refusal writes two amounts under a cent.
func TestSetAsideRefusalWritesSubCentFiguresExactly(t *testing.T) {
	f := newMoneyFixture(t)
	ctx := context.Background()
	if err := f.s.SetQuota(ctx, ScopeUser, f.user.ID, Limits{BudgetPerMonthMicros: i64(1_000_000)}, "admin"); err != nil {
		t.Fatal(err)
	}
	n := 0
	refusal := func(spent, aside, minimum int64) string {
		t.Helper()
		n++
		wb := &Workbench{Name: "w" + string(rune('a'+n)), OwnerID: f.user.ID, ImageID: f.wb.ImageID, FlavorID: f.wb.FlavorID, Token: "t"}
		ask := LaunchAsk{UserID: f.user.ID, Image: "Test", Flavor: "cpu", MinChargeMicros: minimum, MinChargeSecs: 60, SetAsideMicros: aside, Currency: "USD"}
		err := f.s.CreateWorkbench(ctx, wb, GPUNeed{}, CheckLaunchQuota(ask, MonthUsage{AmountMicros: spent}))
		var qe *QuotaError
		if !errors.As(err, &qe) || qe.Limit != "budget_per_month_micros" {
			t.Fatalf("spent %d, set aside %d, minimum %d: %v; want a budget refusal", spent, aside, minimum, err)
		}
		return qe.Message
	}
	for _, c := range []struct {
		spent, aside, minimum int64
		want                  []string
	}{
		// 0.004 left, 0.003 set aside, a minimum of 0.002.
		{996_000, 3_000, 2_000, []string{"would bill 0.003 USD", "the rest of the 0.004 USD left", "minimum charge of 0.002 USD;"}},
		// 0.004 left, all of it (and more) set aside.
		{996_000, 5_000, 2_000, []string{"would bill 0.005 USD", "all of the 0.004 USD left"}},
		// 0.50 left, 0.499 set aside: the rest, 0.001, is short of 0.002.
		{500_000, 499_000, 2_000, []string{"would bill 0.499 USD", "the rest of the 0.50 USD left", "minimum charge of 0.002 USD;"}},
		// Amounts owed of a cent or more keep the currency's decimals, and
		// a sliver left is written to the micro-unit, as the banner writes
		// it (it read "< 0.01", and the banner "< $0.01" beside a refusal
		// of "0.001").
		{999_000, 500_000, 10_000, []string{"would bill 0.50 USD", "all of the 0.001 USD left"}},
		{0, 400_001, 600_000, []string{"would bill 0.41 USD", "the rest of the 1.00 USD left", "minimum charge of 0.60 USD;"}},
	} {
		msg := refusal(c.spent, c.aside, c.minimum)
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("spent %d, set aside %d, minimum %d:\n%q\nlacks %q", c.spent, c.aside, c.minimum, msg, w)
			}
		}
	}
}

// A booking whose unused time would cost less than a cent, more than the
// less than a cent its booker's budget has left, is refused with both
// figures to the micro-unit: it read "would be billed 0.01 USD …, more
// than the < 0.01 USD your monthly budget has left".
func TestBookingRefusalWritesSubCentFiguresExactly(t *testing.T) {
	f := newMoneyFixture(t)
	ctx := context.Background()
	if err := f.s.SetQuota(ctx, ScopeUser, f.user.ID, Limits{BudgetPerMonthMicros: i64(1_000_000)}, "admin"); err != nil {
		t.Fatal(err)
	}
	const h100 = "NVIDIA H100 80GB HBM3"
	start := time.Now().UTC().Add(2 * time.Hour).Truncate(time.Hour)
	if start.Month() != start.Add(3*time.Hour).Month() || start.Month() != time.Now().UTC().Month() {
		t.Skip("the booking must lie in this month") // the last hours of a month
	}
	r := &Reservation{UserID: f.user.ID, GPUModel: h100, Units: 1, StartsAt: start, EndsAt: start.Add(3 * time.Hour)}
	bb := &BookingBudget{Currency: "USD", Month: MonthUsage{AmountMicros: 998_000}, Schedules: map[string]pricing.Schedule{
		pricing.ScheduleKey(pricing.GPU, h100): {{Effective: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), Micros: 1_000}},
	}}
	var qe *QuotaError
	if err := f.s.CreateReservation(ctx, r, 8, false, "", bb); !errors.As(err, &qe) {
		t.Fatalf("booking 3 h at 0.001 an hour with 0.002 left: %v, want a quota refusal", err)
	}
	for _, w := range []string{"would be billed 0.003 USD", "more than the 0.002 USD your monthly budget has left"} {
		if !strings.Contains(qe.Message, w) {
			t.Errorf("%q lacks %q", qe.Message, w)
		}
	}
}
