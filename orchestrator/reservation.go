package orchestrator

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"workbench/models"
	"workbench/orchestrator/scheduler"
)

// Reservations (issue 12 §4; docs/scheduling.md). A booking holds N units
// of one kind — whole GPUs of a model, MIG instances of a profile, slices of
// the shared GPUs of a model — for its user over a window: the scheduler
// keeps the booked units the booker does not use from everyone else (they
// queue), and the booker's launches use them before anyone ahead. Once over
// (ended or released), a booking is settled: the unit-seconds it held that
// its booker did not use are recorded (the report) and, while an admin has
// "bill reserved-but-unused time" on, billed at the units' rate.

// ReserveRequest is a booking asked for.
type ReserveRequest struct {
	Kind       string // gpu (default), mig or slice
	Model      string
	Profile    string // MIG profile, for kind mig
	Units      int
	Start, End time.Time
	Note       string
	// By is who books (the owner, or an administrator booking for them);
	// an administrator's booking is not held to the weekly cap.
	By *models.User
	// Group, when set, holds the units for its members: the owner books
	// for a group they are in (an administrator for any group) and pays
	// for what none of its members used.
	Group *models.Group
}

// Reserve books units for owner over [start, end).
func (m *Manager) Reserve(ctx context.Context, owner *models.User, req ReserveRequest) (*models.Reservation, error) {
	by := req.By
	if by == nil {
		by = owner
	}
	// A window already open starts now (docs/scheduling.md): its unused
	// time, its no-show clock and the weekly cap count from the booking, not
	// from a start before it existed (that was billed as reserved-unused).
	start := req.Start
	if now := m.now().Truncate(time.Second); start.Before(now) {
		start = now
	}
	r := &models.Reservation{UserID: owner.ID, GPUModel: req.Model, UnitKind: req.Kind, MIGProfile: req.Profile, Units: req.Units,
		StartsAt: start, EndsAt: req.End, Note: req.Note, CreatedBy: by.Username}
	if g := req.Group; g != nil {
		if !by.IsAdmin() && !slices.Contains(g.Members, owner.Username) {
			return nil, &models.ValidationError{Field: "group", Message: reasonf("you are not in the group %s; book for yourself or a group of yours", g.Name)}
		}
		r.GroupID, r.GroupName = &g.ID, g.Name
	}
	capacity, err := m.pool.Capacity(ctx, r.Kind(), req.Model, req.Profile)
	if err != nil {
		return nil, err
	}
	// Users are held to their budget (the booker pays for unused time);
	// an administrator's booking, as with the weekly cap, is not.
	var budget *models.BookingBudget
	if !by.IsAdmin() {
		if budget, err = m.bookingBudget(ctx, owner.ID); err != nil {
			return nil, err
		}
	}
	// The booking and its audit row (reservation.create) commit together.
	err = m.Audited(ctx, by.Username, func(tx *models.Store) (models.AuditRecord, error) {
		forHolder := ""
		if by.ID != owner.ID {
			forHolder = owner.Username
		}
		if err := tx.CreateReservation(ctx, r, capacity, !by.IsAdmin(), forHolder, budget); err != nil {
			return models.AuditRecord{}, err
		}
		return models.AuditRecord{Action: "reservation.create", Target: strconv.FormatInt(r.ID, 10), After: r}, nil
	})
	if err != nil {
		return nil, m.refusal(ctx, err) // a full calendar or a used-up cap reads like a quota: 422
	}
	m.log.Info("reservation", "id", r.ID, "user", owner.Username, "kind", r.UnitKind, "model", r.GPUModel, "profile", r.MIGProfile,
		"units", r.Units, "start", r.StartsAt, "end", r.EndsAt)
	m.kickDrain()
	m.budgetChanged(r.UserID) // it sets aside some of the budget: a run's stop may come sooner
	return r, nil
}

// bookingBudget is what a booking by userID is held to: their use of this
// month's limits and, while reserved-but-unused time is billed, the prices
// that bill it.
func (m *Manager) bookingBudget(ctx context.Context, userID int64) (*models.BookingBudget, error) {
	month, err := m.billing.MonthUsage(ctx, userID)
	if err != nil {
		return nil, err
	}
	b := &models.BookingBudget{Month: month, Currency: m.opt.Currency}
	bill, err := m.store.ReservationBillUnused(ctx)
	if err != nil || !bill {
		return b, err
	}
	b.Schedules, err = m.store.Schedules(ctx)
	return b, err
}

// CancelReservation releases a reservation of its owner (or any, for an
// administrator).
func (m *Manager) CancelReservation(ctx context.Context, who *models.User, id int64) error {
	r, err := m.store.ReservationByID(ctx, id)
	if err != nil {
		return err
	}
	if r.UserID != who.ID && !who.IsAdmin() {
		if r.For(who.ID) {
			// A member sees the group's booking; they are told whose it
			// is to cancel rather than that it does not exist.
			booker, err := m.store.UserByID(ctx, r.UserID)
			if err != nil {
				return err
			}
			return &RefusedError{Code: "not_booker", Message: reasonf("only %s, who booked reservation #%s for the group, or an admin can cancel it", booker.Username, strconv.FormatInt(r.ID, 10))}
		}
		return models.ErrNotFound // not theirs: as if it did not exist
	}
	if r.ReleasedAt != nil {
		return &ErrState{Message: reasonf("the reservation is already released; book a new one if you still need the GPUs")}
	}
	// The release and its audit row (reservation.cancel) commit together.
	err = m.Audited(ctx, who.Username, func(tx *models.Store) (models.AuditRecord, error) {
		return models.AuditRecord{Action: "reservation.cancel", Target: strconv.FormatInt(id, 10)},
			tx.ReleaseReservation(ctx, id, "cancelled by "+who.Username)
	})
	if err != nil {
		return err
	}
	m.kickDrain()
	m.budgetChanged(r.UserID) // less is set aside from its release on
	return nil
}

// ReleaseReservationsOf releases the bookings of a user not yet over, in
// one audited change by who (an administrator disabling the account).
func (m *Manager) ReleaseReservationsOf(ctx context.Context, who string, u *models.User, reason string) (int64, error) {
	var n int64
	err := m.Audited(ctx, who, func(tx *models.Store) (models.AuditRecord, error) {
		var err error
		if n, err = tx.ReleaseReservationsOf(ctx, u.ID, reason); err == nil && n == 0 {
			err = errNothingReleased // nothing changed: no audit row either
		}
		return models.AuditRecord{Action: "reservation.release_all", Target: u.Username, After: map[string]any{"released": n, "reason": reason}}, err
	})
	if errors.Is(err, errNothingReleased) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	m.kickDrain()
	return n, nil
}

// errNothingReleased ends ReleaseReservationsOf's transaction when the user
// had no booking to release.
var errNothingReleased = errors.New("no booking to release")

// releaseNoShows releases active reservations whose booker, NoShow after
// the start, holds none of the booked kind of unit, waits for none and has
// used none of it since the start.
func (m *Manager) releaseNoShows(ctx context.Context) {
	now := m.now()
	list, err := m.store.Reservations(ctx, now)
	if err != nil {
		m.log.Warn("reservations: list", "err", err)
		return
	}
	for _, r := range list {
		// The no-show time counts from the start, or from the booking for
		// a window already open when it was booked.
		from := r.StartsAt
		if r.CreatedAt.After(from) {
			from = r.CreatedAt
		}
		if r.StartsAt.After(now) || now.Before(from.Add(m.opt.ReservationNoShow)) {
			continue
		}
		using, err := m.usesUnits(ctx, &r)
		if err != nil || using {
			continue
		}
		// A booking its user has used is theirs to its end (a gap between
		// two runs is no no-show).
		if used, _, _, err := m.reservationUse(ctx, &r, now); err != nil || used > 0 {
			continue
		}
		reason := reasonf("no-show: nothing of it was used %s after its start", m.opt.ReservationNoShow)
		if from.After(r.StartsAt) {
			reason = reasonf("no-show: nothing of it was used %s after it was booked", m.opt.ReservationNoShow)
		}
		if err := m.store.ReleaseReservation(ctx, r.ID, reason); err != nil {
			m.log.Warn("reservations: release", "id", r.ID, "err", err)
			continue
		}
		m.log.Info("reservation released", "id", r.ID, "reason", reason)
	}
	m.settleReservations(ctx)
}

// usesUnits reports whether a booking's holder (its user, or a member of
// its group) holds or waits for units of its kind (model, and profile for
// MIG), or has a launch naming it.
func (m *Manager) usesUnits(ctx context.Context, r *models.Reservation) (bool, error) {
	var wbs []models.Workbench
	for _, h := range r.HolderIDs() {
		list, err := m.store.ListWorkbenches(ctx, h, append([]string{models.StateQueued}, models.ActiveStates...)...)
		if err != nil {
			return false, err
		}
		wbs = append(wbs, list...)
	}
	want := reservationPool(r)
	for _, wb := range wbs {
		if wb.ReservationID != nil && *wb.ReservationID == r.ID {
			return true, nil
		}
		if n, err := m.unitsOfPool(ctx, wb.FlavorID, want); n > 0 || err != nil {
			return n > 0, err
		}
	}
	return false, nil
}

// unitsOfPool is how many units of pool want flavorID asks for (0 for
// another kind of unit, or a flavor since deleted).
func (m *Manager) unitsOfPool(ctx context.Context, flavorID int64, want scheduler.Pool) (int, error) {
	fl, err := m.store.FlavorByID(ctx, flavorID)
	if errors.Is(err, models.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if fl.GPUCount > 0 && unitPool(flavorKind(fl), fl.GPUModel, fl.MIGProfile) == want {
		return fl.GPUCount, nil
	}
	return 0, nil
}

// HeldByHolders counts the units of a booking's kind that its holders'
// running workbenches hold now. They count toward the booking (it
// guarantees its holders that many units at once, as a cloud's capacity
// reservation does), so a booking made while they run keeps only the rest
// back for new launches: the booking page says so rather than letting the
// booker believe it added units.
func (m *Manager) HeldByHolders(ctx context.Context, r *models.Reservation) (int, error) {
	want := reservationPool(r)
	n := 0
	for _, h := range r.HolderIDs() {
		list, err := m.store.ListWorkbenches(ctx, h, models.ActiveStates...)
		if err != nil {
			return 0, err
		}
		for _, wb := range list {
			units, err := m.unitsOfPool(ctx, wb.ShapeFlavorID(), want) // the run's: a CPU-only twin holds none
			if err != nil {
				return 0, err
			}
			n += units
		}
	}
	return n, nil
}

// flavorKind is a flavor's unit kind (gpu when empty).
func flavorKind(fl *models.Flavor) string {
	if fl.UnitKind == "" {
		return models.UnitGPU
	}
	return fl.UnitKind
}

// pinReservation checks the booking a launch names (the owner's, not over,
// of the flavor's units, large enough; one not yet open only with queue)
// and records it on the workbench.
func (m *Manager) pinReservation(ctx context.Context, owner *models.User, fl *models.Flavor, req LaunchRequest, wb *models.Workbench) error {
	badReservation := func(format string, args ...any) error {
		return &models.ValidationError{Field: "reservation", Message: reasonf(format, args...)}
	}
	b, err := m.store.ReservationByID(ctx, req.Reservation)
	if errors.Is(err, models.ErrNotFound) || (err == nil && !b.For(owner.ID)) {
		return badReservation("you have no reservation #%s", strconv.FormatInt(req.Reservation, 10))
	}
	if err != nil {
		return err
	}
	now := m.now()
	switch {
	case b.ReleasedAt != nil || !now.Before(b.EndsAt):
		return badReservation("reservation #%s is over", strconv.FormatInt(b.ID, 10))
	case fl.GPUCount == 0 || reservationPool(b) != unitPool(flavorKind(fl), fl.GPUModel, fl.MIGProfile):
		return badReservation("reservation #%s books %s; the flavor %s asks for other units", strconv.FormatInt(b.ID, 10), b.UnitLabel(), fl.Name)
	case fl.GPUCount > b.Units:
		return badReservation("reservation #%s books %d units; the flavor %s needs %d", strconv.FormatInt(b.ID, 10), b.Units, fl.Name, fl.GPUCount)
	case now.Before(b.StartsAt) && !req.Queue:
		return badReservation("reservation #%s opens at %s UTC: launch with queue to wait for it", strconv.FormatInt(b.ID, 10), b.StartsAt.UTC().Format("2006-01-02 15:04"))
	}
	wb.ReservationID = &b.ID
	if now.Before(b.StartsAt) {
		// It waits for the window, then the usual maximum wait.
		exp := b.StartsAt.Add(m.opt.QueueMaxWait)
		wb.QueueExpiresAt = &exp
	}
	return nil
}

// launchCheck adds to a launch's quota check, inside its transaction, the
// bookings of others: a launch that does not queue may take only the free
// units that active bookings of users other than ownerID hold back (the
// queue's scheduler applies the same rule to queued launches). A start of a
// stopped workbench (startCheck) is held to the same rule.
func (m *Manager) launchCheck(ownerID int64, need models.GPUNeed, quota func(*models.Tx) error) func(*models.Tx) error {
	return m.reservedCheck(ownerID, need, quota, reasonf("launch with queue to wait for it"))
}

// startCheck is launchCheck for starting a stopped workbench again, which
// cannot queue: its refusal says when to try again.
func (m *Manager) startCheck(ownerID int64, need models.GPUNeed, quota func(*models.Tx) error) func(*models.Tx) error {
	return m.reservedCheck(ownerID, need, quota, reasonf("start it again when the booking ends, or let it wait in the queue"))
}

func (m *Manager) reservedCheck(ownerID int64, need models.GPUNeed, quota func(*models.Tx) error, hint string) func(*models.Tx) error {
	if need.Count == 0 {
		return quota
	}
	return func(tx *models.Tx) error {
		if err := quota(tx); err != nil {
			return err
		}
		free, held, err := tx.ReservedForOthers(need, ownerID, m.now())
		if err != nil || held == 0 || free-held >= need.Count {
			return err
		}
		return &RefusedError{Code: "no_capacity", Message: reasonf("%s needed; %d free (%d reserved for someone else now); %s",
			needText(need), max(free-held, 0), held, hint)}
	}
}

// ReservationFits reports whether a launch of fl may name booking r: r
// books fl's kind of unit (model, and profile for MIG) and at least fl's
// count (pinReservation's rule, for forms that offer bookings).
func ReservationFits(r *models.Reservation, fl *models.Flavor) bool {
	return fl.GPUCount > 0 && fl.GPUCount <= r.Units && reservationPool(r) == unitPool(flavorKind(fl), fl.GPUModel, fl.MIGProfile)
}
