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

// setAsideRig is a clocked unit rig on the 10th of next month, 09:00 UTC
// (so an afternoon's bookings lie in one month), with unused booked time
// billed, and the hourly rate of one whole GPU.
func setAsideRig(t *testing.T) (r *unitRig, advance func(time.Duration), unitPerHour int64) {
	t.Helper()
	r, advance = clockedUnitRig(t)
	r.m.billing.now = r.m.now // the budget's timer reads billing's clock
	ctx := context.Background()
	now := r.m.now()
	advance(models.MonthStart(now).AddDate(0, 1, 9).Add(9 * time.Hour).Sub(now))
	if err := r.store.SetReservationBillUnused(ctx, true); err != nil {
		t.Fatal(err)
	}
	scheds, err := r.store.Schedules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	unitPerHour, err = r.m.billing.hourlyRate(pricing.Shape{UnitKind: models.UnitGPU, GPUModel: r.gpus[0].Model, GPUCount: 1}, scheds)
	if err != nil || unitPerHour <= 0 {
		t.Fatalf("GPU rate %d: %v", unitPerHour, err)
	}
	return r, advance, unitPerHour
}

func (r *unitRig) setBudget(t *testing.T, micros int64) {
	t.Helper()
	if err := r.store.SetQuota(context.Background(), models.ScopeUser, r.owner.ID, models.Limits{BudgetPerMonthMicros: &micros}, "test"); err != nil {
		t.Fatal(err)
	}
}

func (r *unitRig) bookWhole(t *testing.T, units int, from time.Time, d time.Duration) *models.Reservation {
	t.Helper()
	b, err := r.m.Reserve(context.Background(), r.owner, ReserveRequest{Kind: models.UnitGPU, Model: r.gpus[0].Model, Units: units, Start: from, End: from.Add(d), By: r.owner})
	if err != nil {
		t.Fatalf("book %d GPUs: %v", units, err)
	}
	return b
}

// While unused booked time is billed, a user's bookings hold back of the
// month's budget what they would bill left unused, from the launches that
// do not draw on them; a launch on a booking takes from it. The booking
// was checked against the budget only when it was made: its booker then
// spent the rest on other work and was billed the unused booked time past
// the budget.
func TestMemBookingsHoldTheirBudgetBackFromOtherLaunches(t *testing.T) {
	t.Parallel()
	r, advance, unit := setAsideRig(t)
	ctx := context.Background()
	migMin, _, err := r.m.billing.MinimumCharge(ctx, pricing.Shape{UnitKind: models.UnitMIG, UnitProfile: "1g.10gb", GPUModel: r.gpus[0].Model, GPUCount: 1, CPUMilli: 1000, MemoryMiB: 1024})
	if err != nil || migMin <= 0 {
		t.Fatalf("minimum charge of a MIG run %d: %v", migMin, err)
	}
	// Two GPUs for an hour from an hour on: 2 GPU-hours set aside, and
	// a budget that leaves half a MIG run's minimum beside them.
	start := r.m.now().Add(time.Hour)
	r.setBudget(t, 2*unit+migMin/2)
	booking := r.bookWhole(t, 2, start, time.Hour)
	a, err := r.m.setAsideFor(ctx, r.owner.ID, r.m.now())
	if err != nil || a.micros != 2*unit {
		t.Fatalf("set aside %d (%v), want 2 GPU-hours, %d", a.micros, err, 2*unit)
	}
	_, err = r.m.Launch(ctx, r.owner, LaunchRequest{Name: "other", Image: "mem", Flavor: "mig-1g"})
	var re *RefusedError
	if !errors.As(err, &re) || re.Code != "quota_exceeded" || !strings.Contains(re.Message, "your bookings would bill 6.00") || !strings.Contains(re.Message, "cannot cover this flavor's minimum charge") {
		t.Fatalf("a MIG launch beside a booking that holds the budget: %v; want a quota refusal naming the set-aside", err)
	}
	// Unused time not billed: nothing is set aside.
	if err := r.store.SetReservationBillUnused(ctx, false); err != nil {
		t.Fatal(err)
	}
	other := r.launchRunning(t, "other", "mig-1g")
	if err := r.m.Stop(ctx, other.ID, "test"); err != nil {
		t.Fatal(err)
	}
	if err := r.store.SetReservationBillUnused(ctx, true); err != nil {
		t.Fatal(err)
	}
	// A launch pinned to the booking waits for it and runs on it.
	waits, err := r.m.Launch(ctx, r.owner, LaunchRequest{Name: "waits", Image: "mem", Flavor: "whole", Reservation: booking.ID, Queue: true})
	if err != nil {
		t.Fatalf("a launch queued for the booking: %v", err)
	}
	// Left and started again, it is still pinned to the booking.
	if err := r.m.Stop(ctx, waits.ID, "test"); err != nil {
		t.Fatal(err)
	}
	r.mem().waitState(t, waits.ID, models.StateStopped)
	if err := r.m.StartAs(ctx, waits.ID, r.owner, StartOptions{Queue: true}); err != nil {
		t.Fatalf("a workbench pinned to the booking started again: %v", err)
	}
	// In the booking, a launch on its units draws on what it set aside.
	advance(start.Sub(r.m.now()) + time.Minute)
	r.launchRunning(t, "booked", "whole")
}

// The budget's timer stops work off a booking when it reaches what the
// bookings set aside, and spares the runs a booking holds wholly while it
// does (stopping them would save nothing: their booked time is billed).
func TestMemRunsOffBookingsStopAtTheSetAside(t *testing.T) {
	t.Parallel()
	r, advance, unit := setAsideRig(t)
	ctx := context.Background()
	other := r.launchRunning(t, "other", "mig-1g")
	open, err := r.store.OpenIntervals(ctx, r.owner.ID)
	if err != nil || len(open) != 1 {
		t.Fatalf("open intervals %v %v", open, err)
	}
	scheds, err := r.store.Schedules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	migPerHour, err := r.m.billing.hourlyRate(shapeOf(open[0]), scheds)
	if err != nil || migPerHour <= 0 {
		t.Fatalf("MIG run's rate %d: %v", migPerHour, err)
	}
	// An hour of the MIG run beside 2 GPU-hours booked from in 10 min.
	start := open[0].StartedAt.Add(10 * time.Minute)
	r.setBudget(t, 2*unit+migPerHour)
	r.bookWhole(t, 2, start, time.Hour)
	at, reason, scope, err := r.m.exhaustion(ctx, r.owner.ID)
	if err != nil || !strings.Contains(reason, "set aside") {
		t.Fatalf("exhaustion %s %q: %v; want the set-aside's stop", at, reason, err)
	}
	// Without the set-aside it was three hours on (2 GPU-hours' worth of
	// the budget is a multiple of the MIG run's rate).
	spent := open[0].StartedAt.Add(time.Hour)
	if at.Before(spent.Add(-5*time.Second)) || at.After(spent.Add(5*time.Second)) {
		t.Fatalf("the run off the booking stops %s from its start; want about 1h0m0s", at.Sub(open[0].StartedAt))
	}
	if !scope.stops(other) {
		t.Fatal("the stop spares the run off the booking")
	}
	// Its page says what the stop is for.
	r.m.budgetWork.Wait()
	r.m.scheduleBudget(ctx, r.owner.ID)
	if d := r.m.Deadlines(ctx, other); !d.BudgetStopAt.Equal(at) || !d.BudgetStopForBookings {
		t.Fatalf("the page's budget stop %s (for the bookings: %v); want %s, for the bookings", d.BudgetStopAt, d.BudgetStopForBookings, at)
	}
	// In the booking, a run on its units: the stop spares it while the
	// booking holds it.
	advance(start.Sub(r.m.now()) + time.Second)
	booked := r.launchRunning(t, "booked", "whole")
	at, reason, scope, err = r.m.exhaustion(ctx, r.owner.ID)
	if err != nil || !strings.Contains(reason, "set aside") || !at.Before(start.Add(time.Hour)) {
		t.Fatalf("exhaustion %s %q: %v; want the set-aside's stop before the booking ends", at, reason, err)
	}
	if !scope.stops(other) || scope.stops(booked) {
		t.Fatalf("the stop at %s stops the run off the booking %v, the run on it %v; want only the first", at, scope.stops(other), scope.stops(booked))
	}
	// The page reads the stop the timer recorded: once the launch's
	// recomputation is done.
	r.m.budgetWork.Wait()
	r.m.scheduleBudget(ctx, r.owner.ID)
	if d := r.m.Deadlines(ctx, booked); !d.BudgetStopAt.IsZero() {
		t.Fatalf("the run on the booking shows a budget stop at %s", d.BudgetStopAt)
	}
}

// A run on booked units that stops inside its minimum charge was charged
// to the minimum's end: its booking counts those seconds as used, not
// unused too, and the set-aside does not hold them back a second time. A
// run stopped after 12 s was charged its 60 s minimum and the booking 48 s
// of the same unit as unused; right after a launch on a booking, other
// work was stopped early for it.
func TestMemRunOnABookingIsNotChargedTwiceForItsMinimum(t *testing.T) {
	t.Parallel()
	r, advance, unit := setAsideRig(t)
	ctx := context.Background()
	r.setBudget(t, 100*unit)
	start := r.m.now()
	booking := r.bookWhole(t, 1, start, time.Hour)
	wb := r.launchRunning(t, "booked", "whole")
	a, err := r.m.setAsideFor(ctx, r.owner.ID, r.m.now())
	if err != nil {
		t.Fatal(err)
	}
	// The hour's unit less what its minimum charges from now on (a few
	// micro-units of rounding: each clock hour's line is rounded).
	open, err := r.store.OpenIntervals(ctx, r.owner.ID)
	if err != nil || len(open) != 1 {
		t.Fatalf("open intervals %v %v", open, err)
	}
	minimumAhead := open[0].StartedAt.Add(time.Minute).Sub(r.m.now())
	want := unit - int64(time.Duration(unit)*minimumAhead/time.Hour)
	if d := a.micros - want; d < -3 || d > 3 {
		t.Fatalf("set aside %d µ with a young run on the booking; want about %d (the hour less its minimum ahead, %s)", a.micros, want, minimumAhead)
	}
	// Stopped after 12 s: the booking counts its 60 s minimum as used.
	advance(12 * time.Second)
	if err := r.m.Stop(ctx, wb.ID, "test"); err != nil {
		t.Fatal(err)
	}
	advance(2 * time.Minute)
	b, err := r.store.ReservationByID(ctx, booking.ID)
	if err != nil {
		t.Fatal(err)
	}
	used, unused, _, err := r.m.reservationUse(ctx, b, r.m.now())
	if err != nil {
		t.Fatal(err)
	}
	if used < 60 || used > 61 || used+unused != int64(r.m.now().Sub(b.StartsAt).Seconds()+0.999999) {
		t.Fatalf("a run stopped inside its minimum: the booking counts %d s used and %d unused; want the 60 s minimum used", used, unused)
	}
}
