package models

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
)

// Reservation books Units GPUs of a model for [StartsAt, EndsAt) for one
// user (docs/scheduling.md, "Reservations").
type Reservation struct {
	ID            int64      `gorm:"primaryKey" json:"id"`
	UserID        int64      `json:"-"`
	GPUModel      string     `gorm:"column:gpu_model" json:"gpu_model"`
	Units         int        `json:"units"`
	StartsAt      time.Time  `json:"starts_at"`
	EndsAt        time.Time  `json:"ends_at"`
	Note          string     `json:"note"`
	CreatedBy     string     `json:"created_by"`
	CreatedAt     time.Time  `json:"created_at"`
	ReleasedAt    *time.Time `json:"released_at"`
	ReleaseReason string     `json:"release_reason"`
}

// maxReservation bounds one booking (a course day, a deadline week).
const maxReservation = 14 * 24 * time.Hour

// CreateReservation books r if, at every moment of its window, the
// reservations overlapping it plus r fit in capacity GPUs of the model (the
// GPUs that can be offered). The check and the insert share one immediate
// transaction, so two bookings cannot both take the last units.
func (s *Store) CreateReservation(ctx context.Context, r *Reservation, capacity int) error {
	r.GPUModel = strings.TrimSpace(r.GPUModel)
	now := s.now()
	switch {
	case r.GPUModel == "":
		return invalid("gpu_model", "name the GPU model to book")
	case r.Units <= 0:
		return invalid("units", "book at least one GPU")
	case r.Units > capacity:
		return invalid("units", "the pool has %d × %s that can be offered", capacity, r.GPUModel)
	case r.StartsAt.IsZero() || r.EndsAt.IsZero() || !r.EndsAt.After(r.StartsAt):
		return invalid("ends_at", "give a start and an end after it")
	case r.EndsAt.Before(now):
		return invalid("ends_at", "the window is over")
	case r.EndsAt.Sub(r.StartsAt) > maxReservation:
		return invalid("ends_at", "a reservation lasts at most %s", maxReservation)
	}
	r.StartsAt, r.EndsAt = r.StartsAt.UTC(), r.EndsAt.UTC()
	r.ID, r.CreatedAt, r.ReleasedAt, r.ReleaseReason = 0, now, nil, ""
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var over []Reservation
		if err := tx.Where("released_at IS NULL AND gpu_model = ? AND starts_at < ? AND ends_at > ?", r.GPUModel, r.EndsAt, r.StartsAt).
			Find(&over).Error; err != nil {
			return err
		}
		// The peak of booked units is reached at some reservation's start.
		points := []time.Time{r.StartsAt}
		for _, o := range over {
			if o.StartsAt.After(r.StartsAt) {
				points = append(points, o.StartsAt)
			}
		}
		for _, at := range points {
			booked := r.Units
			for _, o := range over {
				if !o.StartsAt.After(at) && o.EndsAt.After(at) {
					booked += o.Units
				}
			}
			if booked > capacity {
				return &QuotaError{Limit: "reservations", Message: fmt.Sprintf(
					"only %d × %s can be booked from %s: %d are already reserved then", capacity, r.GPUModel,
					at.Format("2006-01-02 15:04 UTC"), booked-r.Units)}
			}
		}
		return tx.Create(r).Error
	})
}

// Reservations lists the unreleased reservations that end after since,
// by start.
func (s *Store) Reservations(ctx context.Context, since time.Time) ([]Reservation, error) {
	var out []Reservation
	err := s.db.WithContext(ctx).Where("released_at IS NULL AND ends_at > ?", since).Order("starts_at, id").Find(&out).Error
	return out, err
}

// ReservationByID returns one reservation.
func (s *Store) ReservationByID(ctx context.Context, id int64) (*Reservation, error) {
	var r Reservation
	if err := s.db.WithContext(ctx).First(&r, id).Error; err != nil {
		return nil, notFound(err)
	}
	return &r, nil
}

// ReleaseReservation ends a reservation early (cancelled, no-show).
func (s *Store) ReleaseReservation(ctx context.Context, id int64, reason string) error {
	now := s.now()
	return s.db.WithContext(ctx).Model(&Reservation{}).Where("id = ? AND released_at IS NULL", id).
		Updates(map[string]any{"released_at": now, "release_reason": reason}).Error
}
