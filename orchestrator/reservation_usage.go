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

// reservedUse is the unit-seconds of r its booker used and did not use up
// to now (a booking still running counts to now).
func reservedUse(r *models.Reservation, spans []models.UnitSpan, now time.Time) (used, unused int64) {
	from, to := r.StartsAt, r.HeldUntil()
	if now.Before(to) {
		to = now
	}
	if !to.After(from) {
		return 0, 0
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
	sort.Slice(edges, func(i, j int) bool { return edges[i].at.Before(edges[j].at) })
	held, at := 0, from
	for _, e := range edges {
		used += int64(min(held, r.Units)) * int64(e.at.Sub(at)/time.Second)
		held += e.delta
		at = e.at
	}
	total := int64(r.Units) * int64(to.Sub(from)/time.Second)
	return used, max(total-used, 0)
}

// reservationUse reads a booking's spans and computes its use to now.
func (m *Manager) reservationUse(ctx context.Context, r *models.Reservation, now time.Time) (used, unused int64, err error) {
	spans, err := m.store.UnitSpansOf(ctx, r.HolderIDs(), r.Kind(), r.GPUModel, r.MIGProfile, r.StartsAt, r.HeldUntil())
	if err != nil {
		return 0, 0, err
	}
	used, unused = reservedUse(r, spans, now)
	return used, unused, nil
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
		used, unused, err := m.reservationUse(ctx, r, now)
		if err != nil {
			m.log.Warn("reservations: use", "id", r.ID, "err", err)
			continue
		}
		var line *models.LedgerEntry
		if bill && unused > 0 {
			if line, err = m.unusedLine(ctx, r, unused); err != nil {
				m.log.Warn("reservations: price unused time", "id", r.ID, "err", err)
				continue // settled when a rate exists
			}
		}
		if err := m.store.SettleReservation(ctx, r.ID, used, unused, line); err != nil && !errors.Is(err, models.ErrConflict) {
			m.log.Warn("reservations: settle", "id", r.ID, "err", err)
			continue
		}
		m.log.Info("reservation settled", "id", r.ID, "used_unit_s", used, "unused_unit_s", unused, "billed", line != nil)
		if line != nil {
			m.budgetChanged(r.UserID)
		}
	}
}

// unusedLine prices unused unit-seconds of r at its units' rate at its
// start (one line, resource "reservation"; quantity: the unused
// unit-seconds over the window's held seconds).
func (m *Manager) unusedLine(ctx context.Context, r *models.Reservation, unused int64) (*models.LedgerEntry, error) {
	scheds, err := m.store.Schedules(ctx)
	if err != nil {
		return nil, err
	}
	res, model := pricing.UnitRate(pricing.Shape{UnitKind: r.Kind(), GPUModel: r.GPUModel, UnitProfile: r.MIGProfile, GPUCount: r.Units})
	rate, ok := scheds[pricing.ScheduleKey(res, model)].At(r.StartsAt)
	if !ok {
		return nil, fmt.Errorf("no %s rate for %s", res, model)
	}
	held := int64(r.HeldUntil().Sub(r.StartsAt) / time.Second)
	note := fmt.Sprintf("reserved but unused: reservation #%d, %s unit-hours of %d × %s", r.ID, unitHours(unused), r.Units, r.UnitLabel())
	if r.GroupID != nil {
		note += " for group " + r.GroupName
	}
	return &models.LedgerEntry{UserID: r.UserID, GroupName: r.GroupName, WorkbenchID: "", Resource: models.ResourceReservation, GPUModel: model,
		PeriodStart: r.StartsAt, PeriodEnd: r.HeldUntil(), Seconds: held, QuantityMilli: unused * 1000 / max(held, 1),
		RateMicros: rate.Micros, AmountMicros: rate.Micros * unused / 3600,
		Note: note}, nil
}

// unitHours is unit-seconds as hours with two decimals.
func unitHours(secs int64) string {
	return fmt.Sprintf("%d.%02d", secs/3600, secs%3600*100/3600)
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
			if used, unused, err = m.reservationUse(ctx, r, now); err != nil {
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
