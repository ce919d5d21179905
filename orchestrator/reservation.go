package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"workbench/models"
)

// Reservations (issue 12 §4; docs/scheduling.md). A booking holds N GPUs of
// a model for its user over a window: the scheduler keeps the booked units
// the booker does not use from everyone else (they queue), and the
// booker's launches use them before anyone ahead. Reserved-but-unused time
// is not billed.

// Reserve books units × model for owner over [start, end).
func (m *Manager) Reserve(ctx context.Context, owner *models.User, model string, units int, start, end time.Time, note string) (*models.Reservation, error) {
	return m.ReserveBy(ctx, owner.Username, owner, model, units, start, end, note)
}

// ReserveBy is Reserve on actor's behalf (the owner, or an administrator
// reserving for them): the reservation and its audit row
// (reservation.create) commit together.
func (m *Manager) ReserveBy(ctx context.Context, actor string, owner *models.User, model string, units int, start, end time.Time, note string) (*models.Reservation, error) {
	cands, err := m.pool.CandidatesByModel(ctx)
	if err != nil {
		return nil, err
	}
	r := &models.Reservation{UserID: owner.ID, GPUModel: model, Units: units, StartsAt: start, EndsAt: end, Note: note, CreatedBy: owner.Username}
	err = m.Audited(ctx, actor, func(tx *models.Store) (models.AuditRecord, error) {
		if err := tx.CreateReservation(ctx, r, len(cands[model])); err != nil {
			return models.AuditRecord{}, err
		}
		return models.AuditRecord{Action: "reservation.create", Target: strconv.FormatInt(r.ID, 10), After: r}, nil
	})
	if err != nil {
		return nil, m.refusal(ctx, err) // a full calendar reads like a quota: 422
	}
	m.log.Info("reservation", "id", r.ID, "user", owner.Username, "model", model, "units", units, "start", r.StartsAt, "end", r.EndsAt)
	m.kickDrain()
	return r, nil
}

// CancelReservation releases a reservation of its owner (or any, for an
// administrator).
func (m *Manager) CancelReservation(ctx context.Context, who *models.User, id int64) error {
	r, err := m.store.ReservationByID(ctx, id)
	if err != nil {
		return err
	}
	if r.UserID != who.ID && !who.IsAdmin() {
		return models.ErrNotFound // not theirs: as if it did not exist
	}
	if r.ReleasedAt != nil {
		return &ErrState{Message: "the reservation is already released"}
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
	return nil
}

// releaseNoShows releases active reservations whose booker, NoShow after
// the start, holds none of the model and waits for none.
func (m *Manager) releaseNoShows(ctx context.Context) {
	now := m.now()
	list, err := m.store.Reservations(ctx, now)
	if err != nil {
		m.log.Warn("reservations: list", "err", err)
		return
	}
	for _, r := range list {
		if r.StartsAt.After(now) || now.Before(r.StartsAt.Add(m.opt.ReservationNoShow)) {
			continue
		}
		using, err := m.usesModel(ctx, r.UserID, r.GPUModel)
		if err != nil || using {
			continue
		}
		reason := fmt.Sprintf("no-show: nothing of it was used %s after its start", m.opt.ReservationNoShow)
		if err := m.store.ReleaseReservation(ctx, r.ID, reason); err != nil {
			m.log.Warn("reservations: release", "id", r.ID, "err", err)
			continue
		}
		m.log.Info("reservation released", "id", r.ID, "reason", reason)
	}
}

// usesModel reports whether user holds or waits for GPUs of model.
func (m *Manager) usesModel(ctx context.Context, user int64, model string) (bool, error) {
	wbs, err := m.store.ListWorkbenches(ctx, user, append([]string{models.StateQueued}, models.ActiveStates...)...)
	if err != nil {
		return false, err
	}
	for _, wb := range wbs {
		fl, err := m.store.FlavorByID(ctx, wb.FlavorID)
		if errors.Is(err, models.ErrNotFound) {
			continue
		}
		if err != nil {
			return false, err
		}
		if fl.GPUModel == model && fl.GPUCount > 0 {
			return true, nil
		}
	}
	return false, nil
}
