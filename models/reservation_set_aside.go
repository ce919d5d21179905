package models

import (
	"context"
	"time"

	"workbench/models/pricing"
)

// BookingsToSettleOf lists the bookings userID made (they pay for what
// those leave unused) that are not settled yet and start before before:
// the ones whose unused time can still land on the month ending then.
func (s *Store) BookingsToSettleOf(ctx context.Context, userID int64, before time.Time) ([]Reservation, error) {
	var out []Reservation
	db := s.db.WithContext(ctx)
	if err := db.Where("user_id = ? AND settled_at IS NULL AND starts_at < ?", userID, before).Order("id").Find(&out).Error; err != nil {
		return nil, err
	}
	return out, fillHolders(db, out)
}

// BookingCost is what r would be billed for [from, to) of its window if
// none of it were used (bookingCost, for the orchestrator's set-aside).
func BookingCost(r *Reservation, scheds map[string]pricing.Schedule, from, to time.Time) (int64, error) {
	return bookingCost(r, scheds, from, to)
}
