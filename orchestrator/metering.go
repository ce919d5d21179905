package orchestrator

import (
	"context"
	"errors"
	"time"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// openInterval starts metering a workbench that reached running. Charging
// starts when the container started (Docker's time): time spent queued,
// pulling or creating is free. Opening twice is harmless (one open interval
// per workbench).
func (m *Manager) openInterval(ctx context.Context, id string, startedAt time.Time) {
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err != nil {
		m.log.Error("metering: load workbench", "id", id, "err", err)
		return
	}
	fl, err := m.store.FlavorByID(ctx, wb.FlavorID)
	if err != nil {
		m.log.Error("metering: load flavor", "id", id, "err", err)
		return
	}
	if startedAt.IsZero() {
		startedAt = time.Now().UTC()
	}
	iv := &models.UsageInterval{WorkbenchID: id, UserID: wb.OwnerID, GPUModel: fl.GPUModel, GPUCount: len(wb.GPUs),
		CPUMilli: int64(fl.CPUCores * 1000), MemoryGiB: int64(fl.MemoryGiB), StartedAt: startedAt.UTC()}
	if len(wb.GPUs) == 0 {
		iv.GPUModel = ""
	}
	if err := m.store.OpenInterval(ctx, iv); err != nil {
		m.log.Error("metering: open interval", "id", id, "err", err)
	}
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
		m.log.Warn("billing", "err", err)
	}
	return nil
}

// lastHeartbeat is when a workbench's open interval was last known alive:
// where a container vanished without an exit time, metering ends there.
func (m *Manager) lastHeartbeat(ctx context.Context, id string) time.Time {
	iv, err := m.store.OpenIntervalOf(ctx, id)
	if errors.Is(err, models.ErrNotFound) || err != nil {
		return time.Time{}
	}
	return iv.HeartbeatAt
}

// BillAndEnforce writes the ledger lines that are due, then stops the
// running workbenches of users who reached a monthly limit (their volumes
// are kept; the reason is shown).
func (m *Manager) BillAndEnforce(ctx context.Context) {
	if _, err := m.billing.BillOnce(ctx); err != nil {
		m.log.Warn("billing", "err", err)
	}
	users, err := m.store.UsersWithOpenIntervals(ctx)
	if err != nil {
		m.log.Warn("quota enforcement", "err", err)
		return
	}
	for _, uid := range users {
		lim, err := m.store.EffectiveQuota(ctx, uid)
		if err != nil {
			continue
		}
		if lim.GPUHoursPerMonth == nil && lim.BudgetPerMonthMicros == nil {
			continue
		}
		use, err := m.billing.MonthUsage(ctx, uid)
		if err != nil {
			continue
		}
		over := models.MonthlyLimitReached(lim, use)
		if over == "" {
			continue
		}
		running, err := m.store.ListWorkbenches(ctx, uid, models.ActiveStates...)
		if err != nil {
			continue
		}
		for _, wb := range running {
			// GPU-hours stop GPU workbenches; a spent budget stops all.
			if lim.BudgetPerMonthMicros == nil || use.AmountMicros < *lim.BudgetPerMonthMicros {
				if len(wb.GPUs) == 0 {
					continue
				}
			}
			m.log.Info("quota: stopping", "id", wb.ID, "user", uid, "reason", over)
			if err := m.Stop(ctx, wb.ID, "stopped: "+over+" (your files are kept)"); err != nil {
				m.log.Warn("quota stop", "id", wb.ID, "err", err)
			}
		}
	}
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
