package orchestrator

import (
	"context"
	"time"

	"workbench/models"
	"workbench/orchestrator/scheduler"
)

// Boost moves a queued workbench to the front of its priority class (an
// administrator's decision, issue 12 §6; BoostBy records who) and
// drains, so positions and a possible start follow at once. It returns
// models.ErrConflict when the workbench is no longer queued.
func (m *Manager) Boost(ctx context.Context, id string) error {
	return m.BoostBy(ctx, id, "")
}

// BoostBy is Boost by an administrator: the boost and its audit row
// (queue.boost, with the position it had) commit together. Without an
// actor (the scheduler's own tests) nothing is recorded.
func (m *Manager) BoostBy(ctx context.Context, id, actor string) error {
	err := m.store.InTx(ctx, func(tx *models.Store) error {
		wb, err := tx.WorkbenchByID(ctx, id)
		if err != nil {
			return err
		}
		if err := tx.BoostQueued(ctx, id); err != nil {
			return err
		}
		if actor == "" {
			return nil
		}
		return tx.WriteAudit(ctx, models.AuditRecord{Actor: actor, Action: "queue.boost", Target: id,
			Before: map[string]any{"queue_position": wb.QueuePosition}, After: map[string]string{"boost": "front of " + wb.Priority}})
	})
	if err != nil {
		return err
	}
	m.log.Info("queue boost", "id", id)
	m.events.Publish(Update{ID: id, State: models.StateQueued, At: time.Now().UTC()})
	m.kickDrain()
	return nil
}

// applyBoosts marks the boosted and the explicitly ordered requests of a
// drain's snapshot (read in the same transaction).
func applyBoosts(q *models.QueueTx, snap *scheduler.Snapshot) error {
	boosts, err := q.Boosts()
	if err != nil {
		return err
	}
	orders, err := q.QueueOrders()
	if err != nil {
		return err
	}
	for i := range snap.Queue {
		if at, ok := boosts[snap.Queue[i].ID]; ok {
			snap.Queue[i].Boosted = at
		}
		snap.Queue[i].Order = orders[snap.Queue[i].ID]
	}
	return nil
}

// MoveQueued moves a queued workbench to a position of its pool's queue
// within its priority class (an administrator's decision; audited as
// actor) and drains, so the positions follow at once. It returns the
// position set (clamped to the class's range).
func (m *Manager) MoveQueued(ctx context.Context, id string, position int, actor string) (int, error) {
	got, err := m.store.MoveQueued(ctx, id, position, actor)
	if err != nil {
		return 0, err
	}
	m.log.Info("queue move", "id", id, "position", got)
	if err := m.Drain(ctx); err != nil {
		m.log.Warn("queue drain after a move", "id", id, "err", err)
	}
	return got, nil
}
