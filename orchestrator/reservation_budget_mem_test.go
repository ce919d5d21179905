package orchestrator

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"workbench/models"
	"workbench/models/pricing"
)

// A booking is held to its booker's monthly budget: a user whose budget is
// used up cannot book units for this month (nothing can be launched on
// them; a group's booking only while unused time is billed, since its
// members may still launch), and while unused time is billed, what the
// user's bookings would cost left unused must fit what the month's budget
// has left. An administrator's booking for the user is not held to it.
func TestMemBookingIsHeldToTheBudget(t *testing.T) {
	t.Parallel()
	r, advance := clockedUnitRig(t)
	ctx := context.Background()
	carol := r.newUser(t, "carol")
	admin, err := r.store.CreateUser(ctx, models.NewUser{Username: "root", Password: "root-password", Role: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	// The 10th of next month, 09:00 UTC: the bookings below lie in one
	// month whatever day the test runs.
	now := r.m.now()
	advance(models.MonthStart(now).AddDate(0, 1, 9).Add(9 * time.Hour).Sub(now))
	now = r.m.now()
	nextMonth := models.MonthStart(now).AddDate(0, 1, 0)
	model := r.gpus[0].Model
	scheds, err := r.store.Schedules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, rateModel := pricing.UnitRate(pricing.Shape{UnitKind: models.UnitGPU, GPUModel: model, GPUCount: 1})
	rate, ok := scheds[pricing.ScheduleKey(res, rateModel)].At(now)
	if !ok || rate.Micros <= 0 {
		t.Fatalf("no GPU rate for %s", model)
	}
	setBudget := func(micros int64) {
		t.Helper()
		if err := r.store.SetQuota(ctx, models.ScopeUser, carol.ID, models.Limits{BudgetPerMonthMicros: &micros}, "test"); err != nil {
			t.Fatal(err)
		}
	}
	billUnused := func(on bool) {
		t.Helper()
		if err := r.store.SetReservationBillUnused(ctx, on); err != nil {
			t.Fatal(err)
		}
	}
	group, err := r.store.CreateGroup(ctx, "lab", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.store.AddGroupMember(ctx, group.ID, carol.ID); err != nil {
		t.Fatal(err)
	}
	group, err = r.store.GroupByName(ctx, "lab")
	if err != nil {
		t.Fatal(err)
	}
	type booking struct {
		by    *models.User
		group *models.Group
		from  time.Time
		hours int
	}
	book := func(b booking) (*models.Reservation, error) {
		return r.m.Reserve(ctx, carol, ReserveRequest{Kind: models.UnitGPU, Model: model, Units: 1, Start: b.from,
			End: b.from.Add(time.Duration(b.hours) * time.Hour), By: b.by, Group: b.group})
	}
	refusedFor := func(t *testing.T, what string, err error, limit, says string) {
		t.Helper()
		var re *RefusedError
		if !errors.As(err, &re) || re.Code != "quota_exceeded" || re.Limit != limit || !strings.Contains(re.Message, says) {
			t.Fatalf("%s: %v; want a %s refusal saying %q", what, err, limit, says)
		}
	}
	inAnHour := now.Add(time.Hour)

	// A budget of 1.5 GPU-hours at the rate.
	setBudget(rate.Micros * 3 / 2)
	// Unused time not billed: a booking costs nothing unused.
	two, err := book(booking{by: carol, from: inAnHour, hours: 2})
	if err != nil {
		t.Fatalf("a 2 h booking while unused time is not billed: %v", err)
	}
	if err := r.m.CancelReservation(ctx, carol, two.ID); err != nil {
		t.Fatal(err)
	}
	billUnused(true)
	_, err = book(booking{by: carol, from: inAnHour, hours: 2})
	refusedFor(t, "2 GPU-hours on a budget of 1.5", err, "budget_per_month_micros", "left unused, this booking would be billed")
	first, err := book(booking{by: carol, from: inAnHour, hours: 1})
	if err != nil {
		t.Fatalf("1 GPU-hour on a budget of 1.5: %v", err)
	}
	_, err = book(booking{by: carol, from: inAnHour.Add(2 * time.Hour), hours: 1})
	refusedFor(t, "a second GPU-hour", err, "budget_per_month_micros", "this booking and your other bookings would be billed")
	// Next month's budget is whole again.
	if _, err := book(booking{by: carol, from: nextMonth.Add(time.Hour), hours: 1}); err != nil {
		t.Fatalf("an hour next month: %v", err)
	}
	// A cancelled booking no longer counts.
	if err := r.m.CancelReservation(ctx, carol, first.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := book(booking{by: carol, from: inAnHour.Add(2 * time.Hour), hours: 1}); err != nil {
		t.Fatalf("an hour after cancelling the first: %v", err)
	}

	// The budget used up: nothing can be launched this month, so nothing
	// can be booked for it, billed or not.
	setBudget(0)
	later := inAnHour.Add(4 * time.Hour)
	for _, bill := range []bool{false, true} {
		billUnused(bill)
		_, err = book(booking{by: carol, from: later, hours: 1})
		refusedFor(t, "a booking with the budget used up", err, "budget_per_month_micros", "nothing can be launched on a booking before "+nextMonth.Format("2006-01-02 15:04 UTC"))
	}
	billUnused(false)
	if _, err := book(booking{by: carol, from: nextMonth.Add(3 * time.Hour), hours: 1}); err != nil {
		t.Fatalf("a booking from next month with this month's budget used up: %v", err)
	}
	// The group's members may still launch on a group's booking: refused
	// only while carol would pay for their unused time.
	if _, err := book(booking{by: carol, group: group, from: later, hours: 1}); err != nil {
		t.Fatalf("a group booking with the booker's budget used up, unused time not billed: %v", err)
	}
	billUnused(true)
	_, err = book(booking{by: carol, group: group, from: later.Add(2 * time.Hour), hours: 1})
	refusedFor(t, "a group booking billed to a used-up budget", err, "budget_per_month_micros", "the group's members leave unused")
	// An administrator decides for her.
	if _, err := book(booking{by: admin, from: later.Add(4 * time.Hour), hours: 1}); err != nil {
		t.Fatalf("an administrator's booking for carol: %v", err)
	}
}

// A booking's unused time is counted in the seconds billing counts, from
// the booking's start: what the report says was unused is exactly the
// unit-seconds billed, and used and unused add up to the window. Each
// stretch between the booker's starts and stops was cut to whole seconds
// on its own, and the report said 108 unused unit-seconds where 104 were
// billed.
func TestReservedUseCountsTheSecondsBilled(t *testing.T) {
	t.Parallel()
	r := newUnitRig(t)
	ctx := context.Background()
	start := r.m.now().Truncate(time.Second)
	res := &models.Reservation{ID: 7, UserID: r.owner.ID, GPUModel: r.gpus[0].Model, UnitKind: models.UnitGPU, Units: 2,
		StartsAt: start, EndsAt: start.Add(100 * time.Second)}
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	stopped := at(40_200)
	spans := []models.UnitSpan{
		{Start: at(10_500), End: &stopped, Units: 1},
		{Start: at(20_300), Units: 1}, // still running at the end
	}
	used, unused, pieces := reservedUse(res, spans, res.EndsAt.Add(time.Minute))
	if used+unused != 200 {
		t.Fatalf("used %d + unused %d unit-seconds; want the window's 2 × 100", used, unused)
	}
	// Seconds from the start, as billed: 0–11 s both unused, 11–21 s one,
	// 21–41 s none, 41–100 s one.
	if unused != 2*11+10+59 {
		t.Fatalf("unused %d unit-seconds; want 91", unused)
	}
	lines, err := r.m.unusedLines(ctx, res, unused, pieces)
	if err != nil {
		t.Fatal(err)
	}
	var billed int64
	for _, l := range lines {
		billed += l.Seconds * l.QuantityMilli / pricing.MilliUnits
	}
	if billed != unused {
		t.Fatalf("%d unit-seconds billed for %d reported unused: %+v", billed, unused, lines)
	}
}
