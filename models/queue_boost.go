package models

import (
	"context"
	"time"
)

// BoostQueued moves a queued workbench to the front of its priority class
// (an administrator's boost, issue 12 §6). ErrConflict when it is no
// longer queued.
func (s *Store) BoostQueued(ctx context.Context, id string) error {
	now := s.now()
	res := s.db.WithContext(ctx).Model(&Workbench{}).Where("id = ? AND state = ? AND deleted_at IS NULL", id, StateQueued).
		Update("queue_boosted_at", now)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrConflict
	}
	return nil
}

// Boosts are the boosts of the current waits: queued workbenches boosted
// since they (last) joined the queue.
func (q *QueueTx) Boosts() (map[string]time.Time, error) {
	var rows []struct {
		ID             string
		QueueBoostedAt time.Time
	}
	err := q.tx.Raw(`SELECT id, queue_boosted_at FROM workbenches
		WHERE state = ? AND deleted_at IS NULL AND queue_boosted_at IS NOT NULL AND queue_boosted_at >= queued_at`, StateQueued).Scan(&rows).Error
	out := make(map[string]time.Time, len(rows))
	for _, r := range rows {
		out[r.ID] = r.QueueBoostedAt
	}
	return out, err
}
