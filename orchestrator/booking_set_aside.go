package orchestrator

import (
	"context"
	"time"

	"workbench/internal/timeorder"
	"workbench/models"
	"workbench/models/pricing"
	"workbench/orchestrator/scheduler"
)

// What a user's bookings set aside of their monthly budget. While
// reserved-but-unused time is billed, a booking is checked against its
// booker's budget when it is made (models.checkBookingBudget), but the
// booker could then spend the rest of the month's budget on other work
// and be billed the unused booked time past it. So the month's budget
// holds back, for each booking of the user's not settled yet, what it
// would bill this month if nothing more were used on it: its unused time
// so far, priced as settlement will, and the rest of its window in this
// month at its units' rates. Launches that do not draw on a booking, and
// runs that do not, must fit what is left beside it; work on a booking
// takes from what was set aside and is not held back by it.

// bookingSetAside is uid's set-aside now, and the booked units it covers.
type bookingSetAside struct {
	micros int64
	covers []bookingCover
}

// bookingCover is a booking in force now: its kind of unit, how many it
// books, how many of those its holders do not use now, until when, and
// what one of its units costs an hour now (what a run on it takes from
// the set-aside: a run's CPU and memory are not booked).
type bookingCover struct {
	pool        scheduler.Pool
	units, free int
	until       time.Time
	unitPerHour int64
}

// setAsideFor reads uid's bookings and prices their set-aside at now.
// Nothing is set aside while unused time is not billed.
func (m *Manager) setAsideFor(ctx context.Context, uid int64, now time.Time) (bookingSetAside, error) {
	var out bookingSetAside
	bill, err := m.store.ReservationBillUnused(ctx)
	if err != nil || !bill {
		return out, err
	}
	month := models.MonthStart(now)
	next := month.AddDate(0, 1, 0)
	list, err := m.store.BookingsToSettleOf(ctx, uid, next)
	if err != nil || len(list) == 0 {
		return out, err
	}
	scheds, err := m.store.Schedules(ctx)
	if err != nil {
		return out, err
	}
	for i := range list {
		r := &list[i]
		kind, model, profile := r.PoolKey()
		spans, err := m.store.BookingSpansOf(ctx, r, kind, model, profile, r.StartsAt, r.HeldUntil())
		if err != nil {
			return out, err
		}
		if _, unused, pieces := reservedUse(r, chargedSpans(spans, m.billing.minCharge), now); unused > 0 {
			// Unpriced units are not billed unused (settlement waits for
			// a rate): nothing to set aside for them either.
			if lines, err := m.unusedLines(ctx, r, unused, pieces); err == nil {
				for _, l := range lines {
					if !l.PeriodStart.Before(month) {
						out.micros += l.AmountMicros
					}
				}
			}
		}
		ahead, err := models.BookingCost(r, scheds, now, next)
		if err != nil {
			return out, err
		}
		// Runs on its units whose minimum charge is not over have been
		// charged their units to its end already (the month's usage
		// counts it): that part will not be unused.
		charged := 0
		for _, s := range spans {
			minEnd := s.Start.Add(m.billing.minCharge)
			if !minEnd.After(now) || s.EndReason == models.EndRestartedOutside || charged >= r.Units {
				continue
			}
			part := *r
			part.Units = min(s.Units, r.Units-charged)
			charged += part.Units
			c, err := models.BookingCost(&part, scheds, now, timeorder.Min(minEnd, next))
			if err != nil {
				return out, err
			}
			ahead -= min(c, ahead)
		}
		out.micros += ahead
		if !now.Before(r.StartsAt) && now.Before(r.HeldUntil()) {
			rate, err := m.billing.hourlyRate(pricing.Shape{UnitKind: kind, GPUModel: model, UnitProfile: profile, GPUCount: 1}, scheds)
			if err != nil {
				rate = 0 // unpriced: nothing was set aside for it either
			}
			out.covers = append(out.covers, bookingCover{pool: reservationPool(r),
				units: r.Units, free: max(r.Units-unitsInUseAt(spans, now), 0), until: r.HeldUntil(), unitPerHour: rate})
		}
	}
	return out, nil
}

// unitsInUseAt counts the units spans hold at t.
func unitsInUseAt(spans []models.UnitSpan, t time.Time) int {
	n := 0
	for _, s := range spans {
		if !s.Start.After(t) && (s.End == nil || s.End.After(t)) {
			n += s.Units
		}
	}
	return n
}

// drawsOnBooking reports whether a launch of units of a kind would be
// held wholly by uid's bookings in force now (their free units): such a
// launch takes from what the bookings set aside.
func (a bookingSetAside) drawsOnBooking(pool scheduler.Pool, units int) bool {
	if units <= 0 {
		return false
	}
	free := 0
	for _, c := range a.covers {
		if c.pool == pool {
			free += c.free
		}
	}
	return free >= units
}

// BookingSetAside is what uid's bookings set aside of this month's
// budget now (zero while unused time is not billed), for the pages that
// show what is left of it.
func (m *Manager) BookingSetAside(ctx context.Context, uid int64) (int64, error) {
	a, err := m.setAsideFor(ctx, uid, m.now())
	return a.micros, err
}

// launchSetAside is what a launch must leave of the budget for uid's
// bookings: nothing when it draws on one of them.
func (m *Manager) launchSetAside(ctx context.Context, uid int64, fl *models.Flavor) (int64, error) {
	a, err := m.setAsideFor(ctx, uid, m.now())
	if err != nil || a.micros == 0 {
		return 0, err
	}
	if fl.GPUCount > 0 && a.drawsOnBooking(unitPool(flavorKind(fl), fl.GPUModel, fl.MIGProfile), fl.GPUCount) {
		return 0, nil
	}
	return a.micros, nil
}

// drawOnBookings is runs (one per interval of open) as the set-aside
// sees them: the part of a run on units its owner's bookings hold (up to
// each booking's units, in the order the runs come) adds nothing to what
// will be billed until that booking ends, since the set-aside counts its
// booked time already; the rest spends as it runs. spare names the runs
// held wholly by bookings, and until when.
func drawOnBookings(open []models.UsageInterval, covers []bookingCover, runs []liveRun) (held []liveRun, spare map[string]time.Time) {
	left := make([]int, len(covers))
	for i, c := range covers {
		left[i] = c.units
	}
	spare = map[string]time.Time{}
	for i, iv := range open {
		run, units := runs[i], iv.GPUCount
		pool := unitPool(iv.UnitKind, iv.GPUModel, iv.UnitProfile) // "" is whole GPUs
		var wholly time.Time
		for j, c := range covers {
			if units == 0 || left[j] == 0 || c.pool != pool {
				continue
			}
			n := min(units, left[j])
			left[j] -= n
			share := min(c.unitPerHour*int64(n), run.perHour)
			held = append(held, liveRun{perHour: share, minEnd: timeorder.Max(run.minEnd, c.until)})
			run.perHour -= share
			units -= n
			if wholly.IsZero() || c.until.Before(wholly) {
				wholly = c.until
			}
		}
		if units == 0 && iv.GPUCount > 0 {
			spare[iv.WorkbenchID] = wholly
		}
		if run.perHour > 0 || units > 0 {
			held = append(held, run)
		}
	}
	return held, spare
}
