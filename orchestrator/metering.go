package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/orchestrator/runtime"
)

// openAttempts and openBackoff bound how long a workbench may run while its
// metering cannot be recorded: then it is stopped, never left unbilled.
const openAttempts = 4

var openBackoff = 250 * time.Millisecond

// openInterval starts metering a workbench that reached running. Charging
// starts when the container started (Docker's time): time spent queued,
// pulling or creating is free. Opening twice is harmless (one open interval
// per workbench). It retries; an error means the caller must stop the
// workbench (the error is logged, counted and audited).
func (m *Manager) openInterval(ctx context.Context, id string, startedAt time.Time) error {
	var err error
	for attempt := 0; attempt < openAttempts; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(openBackoff << (attempt - 1)):
			}
		}
		if err = m.tryOpenInterval(ctx, id, startedAt); err == nil {
			return nil
		}
		m.log.Warn("metering: open interval", "id", id, "attempt", attempt+1, "err", err)
	}
	m.moneyError(ctx, moneyErrOpenInterval, id, err, true)
	return err
}

func (m *Manager) tryOpenInterval(ctx context.Context, id string, startedAt time.Time) error {
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err != nil {
		return fmt.Errorf("load workbench: %w", err)
	}
	fl, err := m.store.FlavorByID(ctx, wb.ShapeFlavorID())
	if err != nil {
		return fmt.Errorf("load flavor: %w", err)
	}
	if startedAt.IsZero() {
		startedAt = time.Now().UTC()
	}
	// What is metered is what is bound: its units, of the flavor's kind.
	iv := &models.UsageInterval{WorkbenchID: id, UserID: wb.OwnerID, GPUModel: fl.GPUModel, GPUCount: len(wb.Units),
		UnitKind: models.UnitGPU, CPUMilli: int64(fl.CPUMilli), MemoryMiB: fl.MemoryMiB, StartedAt: startedAt.UTC()}
	if len(wb.Units) == 0 {
		iv.GPUModel = ""
	} else {
		iv.UnitKind, iv.UnitProfile = wb.Units[0].Kind, wb.Units[0].Profile
	}
	if wb.Preemptible && len(wb.GPUs) > 0 {
		iv.Tier = pricing.TierPreemptible
	}
	if err := m.openIntervalFn(ctx, iv); err != nil {
		return err
	}
	m.budgetChanged(wb.OwnerID)
	return nil
}

// meteringFailed is the reason shown on a workbench stopped because its
// usage could not be recorded.
func meteringFailed(err error) string {
	return reasonf("stopped: the portal could not record this workbench's usage (%v), so it does not run unbilled; an administrator can see the error", err)
}

// closeInterval ends metering at endedAt (Docker's exit time when known) and
// writes what can be billed now. Its error is logged and returned: a stop
// must not report success with the meter still running.
func (m *Manager) closeInterval(ctx context.Context, id string, endedAt time.Time, reason string) error {
	if endedAt.IsZero() {
		endedAt = time.Now().UTC()
	}
	if err := m.store.CloseInterval(ctx, id, endedAt, reason); err != nil {
		m.log.Error("metering: close interval", "id", id, "err", err)
		return err
	}
	if _, err := m.billing.BillOnce(ctx); err != nil {
		m.moneyError(ctx, moneyErrBilling, id, err, false)
	}
	m.BudgetsChanged()
	return nil
}

// vanishedExit is when the container of a workbench that is gone from the
// engine stopped: its die event in the engine's history (since the last
// heartbeat) when the engine still has it, else the last heartbeat, the
// last moment it was known alive. A run copied from the original install
// (copied) ends at its last heartbeat: the original's container is not
// this install's to look for.
func (m *Manager) vanishedExit(ctx context.Context, id string, copied bool) (time.Time, string) {
	iv, err := m.store.OpenIntervalOf(ctx, id)
	if err != nil {
		return time.Time{}, "no open interval"
	}
	if copied {
		return iv.HeartbeatAt, "the last heartbeat in the copied records"
	}
	at, found, err := m.rt.LastExit(ctx, m.installID, id, iv.HeartbeatAt)
	if err != nil {
		m.log.Warn("metering: engine event history", "id", id, "err", err)
	}
	if found && !at.Before(iv.StartedAt) {
		return at, "the engine's die event"
	}
	return iv.HeartbeatAt, "the last heartbeat (the engine no longer knows the exit)"
}

// BillRounds is how many BillAndEnforce passes have finished: tests wait
// for passes to happen instead of sleeping for a time that should contain
// them.
func (m *Manager) BillRounds() uint64 { return m.billRounds.Load() }

// BillAndEnforce writes the ledger lines that are due, then stops the
// running workbenches of users who reached a monthly limit (their volumes
// are kept; the reason is shown).
func (m *Manager) BillAndEnforce(ctx context.Context) {
	defer m.billRounds.Add(1)
	_, err := m.billing.BillOnce(ctx)
	if err != nil {
		m.moneyError(ctx, moneyErrBilling, "", err, false)
	}
	m.stopUnpriced(ctx, err)
	users, err := m.store.UsersWithOpenIntervals(ctx)
	if err != nil {
		m.moneyError(ctx, moneyErrEnforcement, "", err, false)
		return
	}
	for _, uid := range users {
		target := fmt.Sprintf("user:%d", uid)
		lim, err := m.store.EffectiveQuota(ctx, uid)
		if err != nil {
			m.moneyError(ctx, moneyErrEnforcement, target, err, false)
			continue
		}
		if lim.GPUHoursPerMonth == nil && lim.BudgetPerMonthMicros == nil {
			continue
		}
		use, err := m.billing.MonthUsage(ctx, uid)
		if err != nil {
			m.moneyError(ctx, moneyErrEnforcement, target, err, false)
			continue
		}
		over := models.MonthlyLimitReached(lim, use)
		if over == "" {
			continue
		}
		running, err := m.store.ListWorkbenches(ctx, uid, models.ActiveStates...)
		if err != nil {
			m.moneyError(ctx, moneyErrEnforcement, target, err, false)
			continue
		}
		for i := range running {
			wb := &running[i]
			// GPU-hours stop GPU workbenches; a spent budget stops all.
			if lim.BudgetPerMonthMicros == nil || use.AmountMicros < *lim.BudgetPerMonthMicros {
				if len(wb.GPUs) == 0 {
					continue
				}
			}
			m.log.Info("quota: stopping", "id", wb.ID, "user", uid, "reason", over)
			// Told as the budget's timer tells its stop (workbench_stopped):
			// this pass is the timer's safety net, and its stops went
			// untold.
			did, err := m.stopTelling(ctx, wb, reasonf("stopped: %s (your files are kept)", over))
			if err != nil {
				m.log.Warn("quota stop", "id", wb.ID, "err", err)
				continue
			}
			if did {
				m.metrics.culled(CullBudget)
			}
		}
	}
	// The pass is the safety net; the timers stop work at the instant.
	m.scheduleBudgets(ctx)
}

// heartbeat records that the workbenches whose containers the engine shows
// running are alive now. Only those: a heartbeat must never outlive the
// container, or a crash would bill time after it died. When the engine does
// not answer, nothing moves.
func (m *Manager) heartbeat(ctx context.Context) {
	cs, err := m.rt.List(ctx, m.installID)
	if err != nil {
		m.log.Warn("usage heartbeat: engine", "err", err)
		return
	}
	var alive []string
	for _, c := range cs {
		if id := c.Labels[runtime.LabelID]; id != "" && c.Running {
			alive = append(alive, id)
		}
	}
	if err := m.store.HeartbeatIntervals(ctx, alive, time.Now().UTC()); err != nil {
		m.log.Warn("usage heartbeat", "err", err)
	}
}

// unpricedPasses is how many billing passes in a row a running workbench's
// usage may fail to price before it is stopped (a rate may be being fixed).
const unpricedPasses = 3

// stopUnpriced stops running workbenches whose usage could not be priced
// unpricedPasses passes in a row: a workbench must not keep running
// unbilled. err is what BillOnce returned.
func (m *Manager) stopUnpriced(ctx context.Context, err error) {
	failing := map[string]error{}
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		for _, e := range joined.Unwrap() {
			var up *UnpricedError
			if errors.As(e, &up) && up.Open {
				failing[up.WorkbenchID] = up
			}
		}
	}
	m.mu.Lock()
	var stop []string
	for id := range m.unpriced {
		if failing[id] == nil {
			delete(m.unpriced, id)
		}
	}
	for id := range failing {
		m.unpriced[id]++
		if m.unpriced[id] >= unpricedPasses {
			delete(m.unpriced, id)
			stop = append(stop, id)
		}
	}
	m.mu.Unlock()
	for _, id := range stop {
		m.moneyError(ctx, moneyErrBilling, id, failing[id], true)
		if err := m.Stop(ctx, id, meteringFailed(failing[id])); err != nil {
			m.log.Warn("stop unpriced", "id", id, "err", err)
		}
	}
}
