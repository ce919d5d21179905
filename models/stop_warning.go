package models

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// StopWarning is the deadline of one kind (runtime, budget, idle) that a
// workbench's owner was last warned of before the portal stops it.
type StopWarning struct {
	WorkbenchID string `gorm:"primaryKey"`
	Kind        string `gorm:"primaryKey"`
	DeadlineAt  time.Time
	SentAt      time.Time
}

// ClaimStopWarning records that the owner of workbench id is warned now of
// its kind deadline at, and reports whether the warning is to be sent:
// false when a warning of that kind was already recorded for a deadline
// less than same apart (the same deadline, recomputed a second off, or
// warned by the process before a restart). Read and write in one
// transaction, so two passes at once send one warning.
func (s *Store) ClaimStopWarning(ctx context.Context, id, kind string, at time.Time, same time.Duration) (bool, error) {
	claimed := false
	err := s.InTx(ctx, func(tx *Store) error {
		var w StopWarning
		err := tx.db.WithContext(ctx).Where("workbench_id = ? AND kind = ?", id, kind).Take(&w).Error
		switch {
		case err == nil:
			if d := w.DeadlineAt.Sub(at); d < same && d > -same {
				return nil
			}
		case !errors.Is(err, gorm.ErrRecordNotFound):
			return err
		}
		claimed = true
		return tx.db.WithContext(ctx).Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "workbench_id"}, {Name: "kind"}},
			DoUpdates: clause.AssignmentColumns([]string{"deadline_at", "sent_at"}),
		}).Create(&StopWarning{WorkbenchID: id, Kind: kind, DeadlineAt: at.UTC(), SentAt: tx.now()}).Error
	})
	return claimed, err
}
