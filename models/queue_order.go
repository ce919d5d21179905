package models

import (
	"context"
	"sort"
	"time"

	"gorm.io/gorm"
)

// MoveQueued moves a queued workbench to position (1-based) in the queue
// of its units (its pool: the same kind, model and MIG profile), as the
// last drain ordered it (queue_position). A move never crosses priority
// classes (a higher class always goes first): the position is clamped to
// the range its class holds, and the class's order in that pool is frozen
// as the admin left it (queue_order 1, 2, …; later arrivals of the class
// queue behind). It audits the move as actor and returns the position
// set. ErrConflict when the workbench is not queued.
func (s *Store) MoveQueued(ctx context.Context, id string, position int, actor string) (got int, err error) {
	if position < 1 {
		return 0, invalid("position", "must be 1 or more")
	}
	now := s.now()
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		type row struct {
			ID            string
			PriorityRank  int
			QueuePosition int
			QueuedAt      *time.Time
			UnitKind      string
			GPUModel      string
			MIGProfile    string
		}
		var all []row
		if err := tx.Raw(`SELECT w.id, w.priority_rank, w.queue_position, w.queued_at, f.unit_kind, f.gpu_model, f.mig_profile
			FROM workbenches w JOIN flavors f ON f.id = w.flavor_id
			WHERE w.state = ? AND w.deleted_at IS NULL`, StateQueued).Scan(&all).Error; err != nil {
			return err
		}
		var me *row
		for i := range all {
			if all[i].ID == id {
				me = &all[i]
			}
		}
		if me == nil {
			return ErrConflict
		}
		key := func(r row) string {
			k := r.UnitKind
			if k == "" {
				k = UnitGPU
			}
			return k + "|" + r.GPUModel + "|" + r.MIGProfile
		}
		var pool []row
		for _, r := range all {
			if key(r) == key(*me) {
				pool = append(pool, r)
			}
		}
		// The pool as the last drain explained it (not yet explained: last).
		pos := func(r row) int {
			if r.QueuePosition <= 0 {
				return 1 << 30
			}
			return r.QueuePosition
		}
		sort.SliceStable(pool, func(i, j int) bool {
			a, b := pool[i], pool[j]
			if pos(a) != pos(b) {
				return pos(a) < pos(b)
			}
			if a.QueuedAt != nil && b.QueuedAt != nil && !a.QueuedAt.Equal(*b.QueuedAt) {
				return a.QueuedAt.Before(*b.QueuedAt)
			}
			return a.ID < b.ID
		})
		first, class := -1, []string{}
		for i, r := range pool {
			if r.PriorityRank == me.PriorityRank {
				if first < 0 {
					first = i
				}
				if r.ID != id {
					class = append(class, r.ID)
				}
			}
		}
		at := min(max(position-1-first, 0), len(class))
		order := append(append(append([]string{}, class[:at]...), id), class[at:]...)
		for i, wid := range order {
			if err := tx.Model(&Workbench{}).Where("id = ?", wid).
				Updates(map[string]any{"queue_order": i + 1, "queue_ordered_at": now}).Error; err != nil {
				return err
			}
		}
		got = first + at + 1
		return tx.Create(&AuditEntry{At: now, Via: auditVia(ctx), Actor: actor, Action: "queue.move", Target: id,
			Before: jsonText(map[string]any{"position": me.QueuePosition}),
			After:  jsonText(map[string]any{"position": got, "asked": position, "class_rank": me.PriorityRank})}).Error
	})
	if err != nil {
		return 0, err
	}
	return got, nil
}

// QueueOrders are the explicit orders of the current waits (MoveQueued).
func (q *QueueTx) QueueOrders() (map[string]int, error) {
	var rows []struct {
		ID         string
		QueueOrder int
	}
	err := q.tx.Raw(`SELECT id, queue_order FROM workbenches
		WHERE state = ? AND deleted_at IS NULL AND queue_order IS NOT NULL AND queue_ordered_at >= queued_at`, StateQueued).Scan(&rows).Error
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.ID] = r.QueueOrder
	}
	return out, err
}
