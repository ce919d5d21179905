package models

import (
	"errors"
	"time"

	"gorm.io/gorm"

	"workbench/internal/timeorder"
	"workbench/models/pricing"
)

// BookingBudget holds a booking to its booker's monthly limits. The
// booker is who pays for what a booking leaves unused (docs/scheduling.md),
// and a booking no one can launch on keeps the units from everyone else
// for nothing: a user whose budget was used up booked 4 GPUs for a day,
// and the unused time was billed past the budget (6.43 of 5.00; the usage
// bars stop at 100 % and hid it).
type BookingBudget struct {
	// Month is the booker's use of this month's limits: the ledger plus
	// running work, as the launch check counts it (Billing.MonthUsage).
	Month MonthUsage
	// Schedules prices the booked units while reserved-but-unused time is
	// billed; nil while it is not (a booking then costs nothing unused).
	Schedules map[string]pricing.Schedule
	// Currency writes the amounts of a refusal ("12.00 USD").
	Currency string
}

// checkBookingBudget refuses r when
//   - its booker's monthly budget or GPU-hours are used up and it starts
//     this month: nothing can be launched on it before the next month
//     (a group's booking is then refused only while unused time is billed:
//     its members may still launch, but the booker would pay for nothing
//     used);
//   - unused time is billed and, in a calendar month the window touches,
//     what the booker's bookings would cost left wholly unused (this one
//     and the others not over, from now on, at the rates in force then)
//     is more than the budget has left (this month) or allows (a later
//     month: its budget is whole again).
//
// Once booked, what the booking would bill unused is set aside of the
// month's budget from later launches and runs off it (the orchestrator's
// booking_set_aside.go; docs/scheduling.md).
func checkBookingBudget(tx *gorm.DB, r *Reservation, b *BookingBudget, now time.Time) error {
	lim, err := effectiveQuota(tx, r.UserID)
	if err != nil {
		return err
	}
	billed := b.Schedules != nil
	next := MonthStart(now).AddDate(0, 1, 0)
	if r.StartsAt.Before(next) && (r.GroupID == nil || billed) {
		if limit, why := monthlyLimitUsedUp(lim, b.Month); why != "" {
			at := next.Format("2006-01-02 15:04 UTC")
			if r.GroupID != nil {
				return &QuotaError{Limit: limit, Message: Reasonf(
					"%s, and you would pay for the booked time the group's members leave unused; book from %s, when the next month begins", why, at)}
			}
			return &QuotaError{Limit: limit, Message: Reasonf(
				"%s, so nothing can be launched on a booking before %s; book from then", why, at)}
		}
	}
	if !billed || lim.BudgetPerMonthMicros == nil {
		return nil
	}
	var others []Reservation
	if err := tx.Where("user_id = ? AND released_at IS NULL AND settled_at IS NULL AND ends_at > ?", r.UserID, now).Find(&others).Error; err != nil {
		return err
	}
	for m := MonthStart(r.StartsAt); m.Before(r.EndsAt); m = m.AddDate(0, 1, 0) {
		from, to := timeorder.Max(m, now), m.AddDate(0, 1, 0)
		mine, err := bookingCost(r, b.Schedules, from, to)
		if err != nil {
			return err
		}
		all := mine
		for i := range others {
			c, err := bookingCost(&others[i], b.Schedules, from, to)
			if err != nil {
				return err
			}
			all += c
		}
		left := *lim.BudgetPerMonthMicros
		if !m.After(now) {
			left -= b.Month.AmountMicros
		}
		if all <= left {
			continue
		}
		month := m.Format("2006-01")
		leftText, owed := refusalFigures(b.Currency, left, all)
		if all == mine {
			return &QuotaError{Limit: "budget_per_month_micros", Message: Reasonf(
				"left unused, this booking would be billed %s in %s (unused booked time is billed), more than the %s your monthly budget has left then",
				owed[0], month, leftText)}
		}
		return &QuotaError{Limit: "budget_per_month_micros", Message: Reasonf(
			"left unused, this booking and your other bookings would be billed %s in %s (unused booked time is billed), more than the %s your monthly budget has left then",
			owed[0], month, leftText)}
	}
	return nil
}

// monthlyLimitUsedUp names the monthly limit lim that u has used up (its
// quota key) and words it as the start of a booking's refusal ("your
// monthly budget is used up"); "" when none is. MonthlyLimitReached's
// "quota exceeded: …" read, after the page's "Not booked:", as "Not
// booked: quota exceeded: the monthly budget is used up: nothing can …".
// The GPU-hours are told first, as MonthlyLimitReached tells them.
func monthlyLimitUsedUp(lim Limits, u MonthUsage) (limit, why string) {
	if lim.GPUHoursPerMonth != nil && u.GPUSeconds >= *lim.GPUHoursPerMonth*3600 {
		return "gpu_hours_per_month", Reasonf("your monthly limit of %d GPU-hours is used up", *lim.GPUHoursPerMonth)
	}
	if lim.BudgetPerMonthMicros != nil && u.AmountMicros >= *lim.BudgetPerMonthMicros {
		return "budget_per_month_micros", Reasonf("your monthly budget is used up")
	}
	return "", ""
}

// bookingCost is what r would be billed for [from, to) of its window if
// none of it were used: its units at their standard rate, cut at clock
// hours and rate changes as unused time is billed.
func bookingCost(r *Reservation, scheds map[string]pricing.Schedule, from, to time.Time) (int64, error) {
	from, to = timeorder.Max(from, r.StartsAt), timeorder.Min(to, r.HeldUntil())
	if !to.After(from) {
		return 0, nil
	}
	res, model := pricing.UnitRate(pricing.Shape{UnitKind: r.Kind(), GPUModel: r.GPUModel, UnitProfile: r.MIGProfile, GPUCount: r.Units})
	sched, ok := scheds[pricing.ScheduleKey(res, model)]
	if !ok {
		return 0, nil // unpriced units are not billed unused (settlement waits for a rate)
	}
	lines, err := pricing.Split(from, to, int64(r.Units)*pricing.MilliUnits, sched, false)
	if errors.Is(err, pricing.ErrTooLarge) {
		return 0, err
	} else if err != nil {
		return 0, nil // no rate in force for part of it: as above
	}
	var sum int64
	for _, l := range lines {
		sum += l.Amount
	}
	return sum, nil
}
