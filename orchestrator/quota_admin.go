package orchestrator

import (
	"context"
	"time"

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
	// IfVersion, when set, is the Limits.Version the change was made
	// from (the console's form): if the stored quota is another by now,
	// another admin changed it meanwhile and the save is refused with a
	// ConflictError instead of undoing their change.
	IfVersion string
}

// QuotaChangedMeanwhile is the refusal of a save whose form was made from
// an older quota.
const QuotaChangedMeanwhile = "someone changed this quota after you opened the page: your values are below; save again to replace theirs, or reload the page to see them"

// SetQuota checks and stores a quota and writes its audit row (before and
// after) in the same transaction, then tells QuotasChanged.
func (m *Manager) SetQuota(ctx context.Context, ch QuotaChange) error {
	if err := m.checkIdleBounds(ch.Limits); err != nil {
		return err // no database needed: not inside the write lock
	}
	err := m.store.InTx(ctx, func(tx *models.Store) error {
		before, _, err := tx.Quota(ctx, ch.Scope, ch.SubjectID)
		if err != nil {
			return err
		}
		if ch.IfVersion != "" && before.Version() != ch.IfVersion {
			return &models.ConflictError{Message: QuotaChangedMeanwhile}
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

// CapacityChanged is what a change to the pool's units sets off (a GPU back
// in service, a GPU shared or its slices changed): the queue is drained at
// once, so a launch waiting for such a unit starts now rather than at the
// next periodic drain.
func (m *Manager) CapacityChanged() { m.kickDrain() }

// checkIdleBounds refuses idle-timeout bounds no launch could meet: the
// portal's own bounds (--min-idle-timeout, --max-idle-timeout) hold for
// everyone, so a quota's minimum above the portal's maximum, or its maximum
// below the portal's minimum, would refuse every launch of its users.
func (m *Manager) checkIdleBounds(l models.Limits) error {
	lo, hi := int64(m.opt.MinIdle/time.Minute), int64(m.opt.MaxIdle/time.Minute)
	if l.MinIdleMinutes != nil && *l.MinIdleMinutes > hi {
		return &models.ValidationError{Field: "min_idle_minutes", Message: reasonf("must be at most %d (the portal's longest idle timeout, in minutes)", hi)}
	}
	if l.MaxIdleMinutes != nil && *l.MaxIdleMinutes < lo {
		return &models.ValidationError{Field: "max_idle_minutes", Message: reasonf("must be at least %d (the portal's shortest idle timeout, in minutes)", lo)}
	}
	return nil
}
