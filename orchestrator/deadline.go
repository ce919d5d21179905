package orchestrator

import (
	"context"
	"time"

	"workbench/models"
)

// ExtendStep is what one "+1 h" adds to a running workbench's maximum
// runtime (Coder's stop-deadline bump).
const ExtendStep = time.Hour

// MaxUnboundedExtension bounds the extensions of one run when the owner's
// quota sets no maximum runtime: the flavor's limit is then a default stop
// point the owner may push back by at most this much, one hour at a time.
const MaxUnboundedExtension = 12 * time.Hour

// RuntimeRule is what decides a run's maximum runtime:
//
//   - the flavor's maximum runtime is a default stop point the owner may
//     push back with "+1 h" (Extension holds what they added);
//   - the quota's maximum runtime is the admins' hard ceiling: it is never
//     extended, and the flavor's limit plus extensions never passes it;
//   - without a quota ceiling, extensions stop at MaxUnboundedExtension.
//
// A limit of 0 means none.
type RuntimeRule struct {
	Flavor    time.Duration
	Quota     time.Duration
	Extension time.Duration
}

// quotaRuntime is Limit's whose for a limit set by the user's quota.
const quotaRuntime = "your quota's"

// Limit is the run's maximum runtime now (0 = none) and whose limit it is,
// as the culler applies it.
func (r RuntimeRule) Limit() (time.Duration, string) {
	var limit time.Duration
	whose := ""
	if r.Flavor > 0 {
		limit, whose = r.Flavor+r.Extension, "the flavor's"
	}
	if r.Quota > 0 && (limit == 0 || r.Quota < limit) {
		limit, whose = r.Quota, quotaRuntime
	}
	return limit, whose
}

// ceiling is the longest runtime extensions may reach (0 = cannot extend).
func (r RuntimeRule) ceiling() time.Duration {
	switch {
	case r.Flavor == 0:
		return 0
	case r.Quota > 0:
		return r.Quota
	default:
		return r.Flavor + MaxUnboundedExtension
	}
}

// Extend returns the rule after one "+1 h", or why it is refused. A bump
// that would pass the ceiling is cut to it; one at the ceiling is refused.
func (r RuntimeRule) Extend() (RuntimeRule, error) {
	limit, _ := r.Limit()
	ceil := r.ceiling()
	switch {
	case limit == 0:
		return r, &RefusedError{Code: "extend_refused", Message: reasonf("this workbench has no maximum runtime to extend")}
	case (ceil == 0 || limit >= ceil) && r.Quota > 0:
		return r, &RefusedError{Code: "extend_refused", Message: reasonf(
			"your quota allows at most %s of runtime per start; stop and start the workbench to run longer, or ask an administrator", hoursText(limit))}
	case ceil == 0 || limit >= ceil:
		// No quota ceiling: the flavor's limit plus the most "+1 h" adds
		// (it read "your quota allows" for a user with no quota at all).
		return r, &RefusedError{Code: "extend_refused", Message: reasonf(
			"a run of this flavor may be extended by at most %s, to %s; stop and start the workbench to run longer, or ask an administrator", hoursText(MaxUnboundedExtension), hoursText(limit))}
	}
	r.Extension += ExtendStep
	if r.Flavor+r.Extension > ceil {
		r.Extension = ceil - r.Flavor
	}
	return r, nil
}

// Deadlines is when the culler will stop a running workbench unless
// something changes, by the rules the culler itself applies.
type Deadlines struct {
	// LastActivity is the newest activity the portal has seen (proxy
	// traffic, Jupyter's own last_activity as of the culler's last look),
	// else the start.
	LastActivity time.Time
	// IdleFor is how long it has been idle; IdleStopAt is when idle culling
	// will stop it (zero: no idle timeout).
	IdleFor    time.Duration
	IdleStopAt time.Time
	// RuntimeLimit (0: none), whose it is, and RuntimeStopAt (zero: none).
	RuntimeLimit  time.Duration
	RuntimeWhose  string
	RuntimeStopAt time.Time
	// RuntimeExtended is what "+1 h" added to the flavor's limit, when the
	// limit is the flavor's (RuntimeLimit includes it).
	RuntimeExtended time.Duration
	// CanExtend says whether "+1 h" is allowed now; ExtendRefusal says why
	// not (empty when there is no runtime limit at all).
	CanExtend     bool
	ExtendRefusal string
	// BudgetStopAt is when its owner's monthly limit (budget or GPU-hours)
	// is reached at the live rate and the budget timer stops it (zero:
	// none applies, or not known yet).
	BudgetStopAt time.Time
	// BudgetStopForBookings: that stop is for what the owner's bookings
	// set aside of the budget (booking_set_aside.go), not the limit itself.
	BudgetStopForBookings bool
}

// idleStopAt is when a workbench last active at last is idle-culled.
func idleStopAt(last time.Time, idle time.Duration) time.Time { return last.Add(idle) }

// ComputeDeadlines works out the deadlines of a running workbench from its
// record, its runtime rule and the newest activity seen, at now.
func ComputeDeadlines(wb *models.Workbench, rule RuntimeRule, lastActivity, now time.Time) Deadlines {
	var d Deadlines
	d.LastActivity = lastActivity
	if wb.IdleTimeoutS > 0 && !lastActivity.IsZero() {
		d.IdleStopAt = idleStopAt(lastActivity, time.Duration(wb.IdleTimeoutS)*time.Second)
		if idle := now.Sub(lastActivity); idle > 0 {
			d.IdleFor = idle
		}
	}
	d.RuntimeLimit, d.RuntimeWhose = rule.Limit()
	if d.RuntimeWhose != quotaRuntime {
		d.RuntimeExtended = rule.Extension
	}
	if d.RuntimeLimit > 0 && wb.StartedAt != nil {
		d.RuntimeStopAt = wb.StartedAt.Add(d.RuntimeLimit)
		if _, err := rule.Extend(); err != nil {
			d.ExtendRefusal = err.Error()
		} else {
			d.CanExtend = true
		}
	}
	return d
}

// runtimeRule loads the flavor's and the owner's quota limits of a workbench.
func (m *Manager) runtimeRule(ctx context.Context, wb *models.Workbench) RuntimeRule {
	r := RuntimeRule{Extension: time.Duration(wb.RuntimeExtensionS) * time.Second}
	if wb.RunMaxRuntimeS != nil {
		// The flavor's limit as the run started: an edit since applies
		// to the next run, not to one its owner planned by its stop time.
		r.Flavor = time.Duration(*wb.RunMaxRuntimeS) * time.Second
	} else if fl, err := m.store.FlavorByID(ctx, wb.ShapeFlavorID()); err == nil && fl.MaxRuntimeS > 0 {
		r.Flavor = time.Duration(fl.MaxRuntimeS) * time.Second
	}
	if lim, err := m.store.EffectiveQuota(ctx, wb.OwnerID); err == nil && lim.MaxRuntimeHours != nil && *lim.MaxRuntimeHours > 0 {
		r.Quota = time.Duration(*lim.MaxRuntimeHours) * time.Hour
	}
	return r
}

// flavorMaxRuntime is the maximum runtime of the flavor a workbench's run
// uses, kept on the workbench as the run starts; nil when it cannot be
// read (the rule then reads the flavor, as for runs from before).
func (m *Manager) flavorMaxRuntime(ctx context.Context, id string) *int64 {
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err != nil {
		return nil
	}
	fl, err := m.store.FlavorByID(ctx, wb.ShapeFlavorID())
	if err != nil {
		return nil
	}
	return &fl.MaxRuntimeS
}

// lastActivity is the newest activity recorded for a workbench: its start,
// the database's last activity, the proxy's newest touch in memory.
func (m *Manager) lastActivity(wb *models.Workbench) time.Time {
	last := latest(wb.StartedAt, wb.LastActivityAt)
	if t := m.activity.get(wb.ID); t.After(last) {
		last = t
	}
	return last
}

// Deadlines tells when the culler will stop a running workbench (zero
// Deadlines for one that is not running).
func (m *Manager) Deadlines(ctx context.Context, wb *models.Workbench) Deadlines {
	if wb.State != models.StateRunning {
		return Deadlines{}
	}
	d := ComputeDeadlines(wb, m.runtimeRule(ctx, wb), m.lastActivity(wb), m.now())
	// A class's students saw only the idle deadline while their budget
	// stopped them far sooner.
	if st, ok := m.budgetStopOf(wb.OwnerID, wb.ID, holdsWholeGPUs(wb)); ok {
		d.BudgetStopAt, d.BudgetStopForBookings = st.at, st.setAside
	}
	return d
}

// budgetStopOf is when the budget timer stops the run id of owner for a
// monthly limit: the forecast the workbench
// page shows ("your monthly limit is reached at …") and the queue's
// estimates count as its release (snapshot); holdsGPUs, whether the run
// holds whole GPUs (holdsWholeGPUs). ok is false when no limit
// stops it, or its instant is not known yet.
func (m *Manager) budgetStopOf(owner int64, id string, holdsGPUs bool) (budgetStop, bool) {
	st, ok := m.budgets.stopOf(owner)
	if !ok || st.at.IsZero() || !st.stopsRun(id, holdsGPUs) {
		return budgetStop{}, false
	}
	return st, true
}

// ExtendRuntime adds ExtendStep to a running workbench's maximum runtime
// where its rule allows, and returns its new deadlines.
func (m *Manager) ExtendRuntime(ctx context.Context, id string) (Deadlines, error) {
	return m.ExtendRuntimeBy(ctx, id, "")
}

// ExtendRuntimeBy is ExtendRuntime done by actor: the extension and its
// audit row (workbench.extend) commit in one transaction. An empty actor
// writes no audit row.
func (m *Manager) ExtendRuntimeBy(ctx context.Context, id, actor string) (Deadlines, error) {
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err != nil {
		return Deadlines{}, err
	}
	// Stopped, its stop not recorded yet (its record still says running):
	// stopped as its page shows it, nothing to extend.
	if _, unrecorded := m.UnrecordedStop(id); wb.State != models.StateRunning || unrecorded {
		return Deadlines{}, &ErrState{Message: reasonf("only a running workbench can be extended; start it first")}
	}
	rule := m.runtimeRule(ctx, wb)
	next, err := rule.Extend()
	if err != nil {
		return Deadlines{}, err
	}
	before := wb.RuntimeExtensionS
	after := *wb
	after.RuntimeExtensionS = int64(next.Extension / time.Second)
	d := ComputeDeadlines(&after, next, m.lastActivity(wb), m.now())
	refused := &RefusedError{Code: "extend_refused", Message: reasonf("the workbench changed meanwhile (stopped, or extended by another click); reload and try again")}
	err = m.store.InTx(ctx, func(tx *models.Store) error {
		ok, err := tx.ExtendWorkbenchRuntime(ctx, id, before, after.RuntimeExtensionS)
		if err != nil {
			return err
		}
		if !ok {
			return refused
		}
		if actor == "" {
			return nil
		}
		return tx.WriteAudit(ctx, models.AuditRecord{Actor: actor, Action: "workbench.extend", Target: id,
			Before: map[string]int64{"runtime_extension_s": before}, After: map[string]string{"runtime_stop_at": d.RuntimeStopAt.Format(time.RFC3339)}})
	})
	if err != nil {
		return Deadlines{}, err
	}
	// The warning of the old stop is not sent; the new one's is armed.
	m.rearmStopSoon(ctx, id)
	return d, nil
}

// hoursText is "5 h" or "90 min".
func hoursText(d time.Duration) string {
	if d%time.Hour == 0 {
		return reasonf("%d h", int64(d/time.Hour))
	}
	return reasonf("%d min", int64(d/time.Minute))
}
