package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"workbench/models"
	"workbench/models/pricing"
)

// Reserved-but-unused time (issue 12 §4): what a booking held that its
// booker did not use. A booking of N units held from its start to its end
// (or its release, when earlier); at each moment its booker used
// min(N, units of that kind the booker held then) of it. Unused is the
// rest. Units the booker held beyond N, or outside the window, are ordinary
// use; with several bookings of the same units, each counts the booker's
// use on its own (choice: overlapping bookings of one user are rare and a
// booker is never charged for more than each booking held).

// unusedPiece is a stretch of a booking during which a constant number of
// its units went unused.
type unusedPiece struct {
	from, to time.Time
	units    int
}

// reservedUse is the unit-seconds of r its booker used and did not use up
// to now (a booking still running counts to now), and the stretches of
// the unused part, for pricing.
//
// Seconds are counted from the booking's start as billing counts a run's
// (pricing.SplitRun): a stretch from a to b holds ⌈b−start⌉ − ⌈a−start⌉
// seconds, so the stretches add up to the window's ⌈end−start⌉ seconds and
// the unused ones to exactly what unusedLines bills. Each stretch was cut
// to whole seconds on its own: the report said 108 unused unit-seconds
// where 104 were billed.
func reservedUse(r *models.Reservation, spans []models.UnitSpan, now time.Time) (used, unused int64, pieces []unusedPiece) {
	from, to := r.StartsAt, r.HeldUntil()
	if now.Before(to) {
		to = now
	}
	if !to.After(from) {
		return 0, 0, nil
	}
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, s := range spans {
		a, b := s.Start, to
		if s.End != nil && s.End.Before(b) {
			b = *s.End
		}
		if a.Before(from) {
			a = from
		}
		if !b.After(a) || s.Units <= 0 {
			continue
		}
		edges = append(edges, edge{a, s.Units}, edge{b, -s.Units})
	}
	edges = append(edges, edge{to, 0}) // the last stretch, to the end
	sort.SliceStable(edges, func(i, j int) bool { return edges[i].at.Before(edges[j].at) })
	held, at := 0, from
	for _, e := range edges {
		secs := pricing.ChargedSeconds(from, e.at, 0) - pricing.ChargedSeconds(from, at, 0)
		inUse := min(held, r.Units)
		used += int64(inUse) * secs
		if idle := r.Units - inUse; idle > 0 && secs > 0 {
			pieces = append(pieces, unusedPiece{from: at, to: e.at, units: idle})
		}
		unused += int64(r.Units-inUse) * secs
		held += e.delta
		at = e.at
	}
	return used, unused, pieces
}

// reservationUse reads a booking's spans and computes its use to now.
func (m *Manager) reservationUse(ctx context.Context, r *models.Reservation, now time.Time) (used, unused int64, pieces []unusedPiece, err error) {
	spans, err := m.store.BookingSpansOf(ctx, r, r.Kind(), r.GPUModel, r.MIGProfile, r.StartsAt, r.HeldUntil())
	if err != nil {
		return 0, 0, nil, err
	}
	used, unused, pieces = reservedUse(r, chargedSpans(spans, m.billing.minCharge), now)
	return used, unused, pieces, nil
}

// chargedSpans is spans as they were charged: a run that ended inside its
// minimum charge (SPEC §6 rule 3) was charged to the minimum's end, so its
// units count as used that long. Its booking billed the same seconds
// again as unused: a run stopped after 12 s was charged its 60 s minimum,
// and the booking 48 s of those unused. A part that a restart behind the
// portal's back ended has no minimum of its own (the run went on), nor
// has the part of a run cut at its owner's joining or leaving the
// booking's group (the run's minimum is the run's, not the group's).
func chargedSpans(spans []models.UnitSpan, minCharge time.Duration) []models.UnitSpan {
	out := make([]models.UnitSpan, len(spans))
	for i, s := range spans {
		out[i] = s
		if minEnd := s.Start.Add(minCharge); s.End != nil && s.End.Before(minEnd) && s.EndReason != models.EndRestartedOutside && !s.Clipped {
			out[i].End = &minEnd
		}
	}
	return out
}

// settleReservations settles the bookings that are over: their use is
// recorded and, while the admin setting is on, their unused unit-time
// billed at the standard rate of their units at the booking's start.
func (m *Manager) settleReservations(ctx context.Context) {
	now := m.now()
	list, err := m.store.UnsettledReservations(ctx, now)
	if err != nil || len(list) == 0 {
		if err != nil {
			m.log.Warn("reservations: unsettled", "err", err)
		}
		return
	}
	bill, err := m.store.ReservationBillUnused(ctx)
	if err != nil {
		m.log.Warn("reservations: setting", "err", err)
		return
	}
	for i := range list {
		r := &list[i]
		used, unused, pieces, err := m.reservationUse(ctx, r, now)
		if err != nil {
			m.log.Warn("reservations: use", "id", r.ID, "err", err)
			continue
		}
		var lines []models.LedgerEntry
		if bill && unused > 0 {
			if lines, err = m.unusedLines(ctx, r, unused, pieces); err != nil {
				m.log.Warn("reservations: price unused time", "id", r.ID, "err", err)
				continue // settled when a rate exists
			}
		}
		if err := m.store.SettleReservation(ctx, r.ID, used, unused, lines); err != nil && !errors.Is(err, models.ErrConflict) {
			m.log.Warn("reservations: settle", "id", r.ID, "err", err)
			continue
		}
		m.log.Info("reservation settled", "id", r.ID, "used_unit_s", used, "unused_unit_s", unused, "lines", len(lines))
		if len(lines) > 0 {
			m.budgetChanged(r.UserID)
		}
	}
}

// unusedLines prices the unused stretches of r as usage is priced
// (pricing.Split: cut at clock hours and rate changes, each piece at the
// rate in force then, rounded as every line is): one line per piece,
// resource "reservation", its quantity the units left unused then. It was
// one line at the rate of the booking's start, so a rate that fell inside
// the window was charged after it changed, a booking over a month's end
// fell wholly in the month it began, and its amount was cut off rather
// than rounded, in an int64 product that a large rate could overflow.
func (m *Manager) unusedLines(ctx context.Context, r *models.Reservation, unused int64, pieces []unusedPiece) ([]models.LedgerEntry, error) {
	scheds, err := m.store.Schedules(ctx)
	if err != nil {
		return nil, err
	}
	res, model := pricing.UnitRate(pricing.Shape{UnitKind: r.Kind(), GPUModel: r.GPUModel, UnitProfile: r.MIGProfile, GPUCount: r.Units})
	sched, ok := scheds[pricing.ScheduleKey(res, model)]
	if !ok {
		return nil, fmt.Errorf("no %s rate for %s", res, model)
	}
	note := fmt.Sprintf("reserved but unused: reservation #%d, %s unit-hours of %d × %s", r.ID, unitHours(unused), r.Units, r.UnitLabel())
	if r.GroupID != nil {
		note += " for group " + r.GroupName
	}
	var out []models.LedgerEntry
	for _, p := range pieces {
		lines, err := pricing.SplitRun(r.StartsAt, p.from, p.to, int64(p.units)*pricing.MilliUnits, sched, false)
		if err != nil {
			return nil, fmt.Errorf("%s for %s: %w", res, model, err)
		}
		for _, l := range lines {
			out = append(out, models.LedgerEntry{UserID: r.UserID, GroupName: r.GroupName, Resource: models.ResourceReservation, GPUModel: model,
				PeriodStart: l.Start, PeriodEnd: l.End, Seconds: l.Seconds, QuantityMilli: l.Quantity,
				RateMicros: l.RateMicros, AmountMicros: l.Amount, Note: note})
		}
	}
	return out, nil
}

// unitHours is unit-seconds as hours with two decimals, rounded (240
// unit-seconds read 0.06, cut off, for 0.0667).
func unitHours(secs int64) string {
	hundredths := (secs*100 + 1800) / 3600
	return fmt.Sprintf("%d.%02d", hundredths/100, hundredths%100)
}

// UnusedRow is one user's reserved-but-unused report line.
type UnusedRow struct {
	UserID            int64
	Reservations      int
	ReservedUnitSecs  int64
	UsedUnitSecs      int64
	UnusedUnitSecs    int64
	BilledMicros      int64
	UnsettledBookings int // still running: counted to now, not billed yet
}

// ReservedUnused reports, per user, the unit-seconds booked over [from,
// to) (each booking counted whole: from its start to its end or release,
// to now while it runs), used and unused, and what was billed for them.
func (m *Manager) ReservedUnused(ctx context.Context, from, to time.Time) ([]UnusedRow, error) {
	now := m.now()
	list, err := m.store.ReservationsOverlapping(ctx, from, to)
	if err != nil {
		return nil, err
	}
	rows := map[int64]*UnusedRow{}
	var order []int64
	for i := range list {
		r := &list[i]
		if r.StartsAt.After(now) {
			continue
		}
		row := rows[r.UserID]
		if row == nil {
			row = &UnusedRow{UserID: r.UserID}
			rows[r.UserID] = row
			order = append(order, r.UserID)
		}
		row.Reservations++
		used, unused := r.UsedUnitSeconds, r.UnusedUnitSeconds
		if !r.IsSettled() {
			if used, unused, _, err = m.reservationUse(ctx, r, now); err != nil {
				return nil, err
			}
			row.UnsettledBookings++
		}
		row.ReservedUnitSecs += used + unused
		row.UsedUnitSecs += used
		row.UnusedUnitSecs += unused
		row.BilledMicros += r.BilledMicros
	}
	out := make([]UnusedRow, 0, len(order))
	for _, id := range order {
		out = append(out, *rows[id])
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].UnusedUnitSecs > out[j].UnusedUnitSecs })
	return out, nil
}
