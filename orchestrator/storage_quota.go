package orchestrator

import (
	"context"

	"workbench/models"
)

// EventStorageOver tells a user their home storage went over their quota.
const EventStorageOver = "storage_over_quota"

// noteStorageQuotas follows each metering pass: a user whose home storage
// is now over their limit (max_storage_gib) is told once per crossing;
// one back under (files or a home deleted, the limit raised) has the mark
// cleared, so the next crossing is told again. Nothing is stopped: a
// running workbench holds unsaved work, and the limit refuses only
// launches and starts (models.CheckLaunchQuota).
func (m *Manager) noteStorageQuotas(ctx context.Context) {
	states, err := m.store.StorageQuotaStates(ctx)
	if err != nil {
		m.log.Warn("storage quota", "err", err)
		return
	}
	for _, st := range states {
		over := models.StorageOver(st.Limits, st.UsedMilliGiB)
		if over == st.Told {
			continue
		}
		crossed, err := m.store.MarkStorageOver(ctx, st.UserID, over, m.now())
		if err != nil {
			m.log.Warn("storage quota: mark", "user_id", st.UserID, "err", err)
			continue
		}
		if !crossed {
			continue
		}
		m.log.Info("storage quota exceeded", "user_id", st.UserID, "used_milli_gib", st.UsedMilliGiB, "limit_gib", *st.Limits.MaxStorageGiB)
		m.tellUser(ctx, st.UserID, nil, EventStorageOver, reasonf(
			"Your home storage holds %s GiB, more than your quota of %d GiB. Your running workbenches keep running, but new launches and starts are refused until you delete files or a workbench's data.",
			models.GiBText(st.UsedMilliGiB), *st.Limits.MaxStorageGiB), "/usage")
	}
}
