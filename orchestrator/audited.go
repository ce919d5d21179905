package orchestrator

import (
	"context"
	"errors"

	"workbench/models"
)

// Audited makes one change and writes its audit row in the same
// transaction: change runs on a Store bound to the transaction and returns
// the row that records it (Actor defaults to actor). Either both commit or
// neither does: a change that fails (or that the row cannot be written
// for) leaves no row, and no row ever records a change that did not
// happen. This is how the admin actions without a service of their own
// (users, groups, images, flavors, prices, tokens, keys, …) are recorded;
// the ones with rules of their own (SetQuota, Pool.SetDrained,
// SetEgressPolicyBy, ExtendRuntimeBy, the workbench actions below) use the
// same transaction shape.
//
// change must reach the database only through tx (a method on the shared
// Store is outside the transaction and would wait on its lock), and do no
// slow work (password hashing, engine calls) inside it: prepare that first.
func (m *Manager) Audited(ctx context.Context, actor string, change func(tx *models.Store) (models.AuditRecord, error)) error {
	return audited(ctx, m.store, actor, change)
}

func audited(ctx context.Context, store *models.Store, actor string, change func(tx *models.Store) (models.AuditRecord, error)) error {
	return store.InTx(ctx, func(tx *models.Store) error {
		rec, err := change(tx)
		if err != nil {
			return err
		}
		if rec.Action == "" {
			return errors.New("audited change without an action")
		}
		if rec.Actor == "" {
			rec.Actor = actor
		}
		return tx.WriteAudit(ctx, rec)
	})
}

// AuditedAll is Audited for a change that several rows record, written in
// the order given: an account created with its group memberships has the
// user.create row and one group.add_member row per group, as if the
// memberships had been added one by one on the groups page.
func (m *Manager) AuditedAll(ctx context.Context, actor string, change func(tx *models.Store) ([]models.AuditRecord, error)) error {
	return m.store.InTx(ctx, func(tx *models.Store) error {
		recs, err := change(tx)
		if err != nil {
			return err
		}
		for _, rec := range recs {
			if rec.Action == "" {
				return errors.New("audited change without an action")
			}
			if rec.Actor == "" {
				rec.Actor = actor
			}
			if err := tx.WriteAudit(ctx, rec); err != nil {
				return err
			}
		}
		return nil
	})
}

// Record writes the audit row of an action that changes nothing in the
// database by itself (a sign-in, sudo, a pull or image test started, a
// home reset done on the engine): the action has happened when this is
// called; a failure to record is returned for the caller to log. A row
// the database refuses because its disk is full or read-only is kept and
// written, with its time, once it can be (models.AuditHappened).
func (m *Manager) Record(ctx context.Context, rec models.AuditRecord) error {
	if rec.Action == "" || rec.Actor == "" {
		return errors.New("audit record without an action or actor")
	}
	return m.store.AuditHappened(ctx, rec)
}

// RecordView writes the audit row of a read of someone else's data that
// its owner may learn of (an administrator opening a user's workbench
// page): at most one per actor, action and target in
// models.ViewAuditEvery, which the store checks in the insert's own
// transaction (WriteViewAudit). It says whether it wrote.
func (m *Manager) RecordView(ctx context.Context, rec models.AuditRecord) (bool, error) {
	return m.store.WriteViewAudit(ctx, rec)
}
