package orchestrator

import (
	"context"

	"workbench/models"
)

// QuotaChange is an admin's new quota for a scope (the default, a group or
// a user).
type QuotaChange struct {
	Actor     string // the admin, for the audit row
	Scope     string // models.ScopeDefault, ScopeGroup or ScopeUser
	SubjectID int64  // the group's or user's id; 0 for the default
	Name      string // the group's or user's name ("default" for the default)
	Limits    models.Limits
	// KeepPerModel leaves the per-model GPU limits as stored (the quota
	// page's form does not show them).
	KeepPerModel bool
}

// SetQuota checks and stores a quota and writes its audit row (before and
// after) in the same transaction, then tells QuotasChanged.
func (m *Manager) SetQuota(ctx context.Context, ch QuotaChange) error {
	err := m.store.InTx(ctx, func(tx *models.Store) error {
		before, _, err := tx.Quota(ctx, ch.Scope, ch.SubjectID)
		if err != nil {
			return err
		}
		if ch.KeepPerModel {
			ch.Limits.MaxGPUsPerModel = before.MaxGPUsPerModel
		}
		if err := tx.CheckQuotaInput(ctx, ch.Limits); err != nil {
			return err
		}
		if err := tx.SetQuota(ctx, ch.Scope, ch.SubjectID, ch.Limits, ch.Actor); err != nil {
			return err
		}
		return tx.WriteAudit(ctx, models.AuditRecord{Actor: ch.Actor, Action: "quota.set", Target: ch.Scope + ":" + ch.Name,
			Before: before, After: ch.Limits})
	})
	if err == nil {
		m.QuotasChanged()
	}
	return err
}

// QuotasChanged is what a change to someone's effective quota sets off (a
// quota saved, a user added to or removed from a group): budget instants
// are recomputed and the queue drained, so a launch waiting on the old
// limit starts, or one now beyond it is refused, at once.
func (m *Manager) QuotasChanged() {
	m.BudgetsChanged()
	m.kickDrain()
}
