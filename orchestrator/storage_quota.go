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
// launches and starts with GPUs (models.CheckLaunchQuota): one without
// GPU is how the user reaches the home to delete files.
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
		msg := reasonf("Your home storage holds %s GiB, more than your quota of %d GiB. Your running workbenches keep running, but launches and starts with GPUs are refused until you are back under it: start a workbench without GPU to delete files, or delete a workbench's data.",
			models.GiBText(st.UsedMilliGiB), *st.Limits.MaxStorageGiB)
		// Without a flavor without GPU open to them, only deleting a
		// workbench's data or an administrator gets them out: the log says
		// so for administrators, who can add one (or raise the limit).
		if qe, err := m.store.StorageRefusal(ctx, models.LaunchAsk{UserID: st.UserID, GPUs: 1}, false); err == nil && qe != nil && qe.WayOut == models.WayOutAskAdmin {
			m.log.Warn("storage quota exceeded, and no flavor without GPU is open to the user, so no workbench of theirs can start to delete files; add a CPU-only flavor (or allow one in their quota), or raise their limit",
				"user_id", st.UserID, "used_milli_gib", st.UsedMilliGiB, "limit_gib", *st.Limits.MaxStorageGiB)
			msg = reasonf("Your home storage holds %s GiB, more than your quota of %d GiB. Your running workbenches keep running, but launches and starts with GPUs are refused until you are back under it, and no flavor without GPU is open to you: delete files in a running workbench, delete a workbench's data, or ask an administrator.",
				models.GiBText(st.UsedMilliGiB), *st.Limits.MaxStorageGiB)
		}
		m.tellUser(ctx, st.UserID, nil, EventStorageOver, msg, "/usage")
	}
}
