package orchestrator

import (
	"context"
	"strings"

	"workbench/orchestrator/runtime"
)

// bytesPerMilliGiB converts measured bytes to the ledger's milli-GiB.
const bytesPerMilliGiB = (1 << 30) / 1000

// resizeMilliGiB is how much a volume must grow or shrink (100 MiB) before
// its storage interval is split at the new size.
const resizeMilliGiB = 100 * 1000 / 1024

// MeterStorage measures the home volumes and records them in storage
// intervals: a volume is billed per GiB-month for as long as it exists,
// whether or not a workbench runs (SPEC §6 rule 4).
func (m *Manager) MeterStorage(ctx context.Context) {
	vols, err := m.rt.VolumeSizes(ctx, m.installID)
	if err != nil {
		m.log.Warn("storage metering: measure volumes", "err", err)
		return
	}
	open, err := m.store.OpenStorageIntervals(ctx)
	if err != nil {
		m.log.Warn("storage metering", "err", err)
		return
	}
	now := m.now() // the manager's clock: tests move it instead of sleeping
	seen := map[string]bool{}
	for _, v := range vols {
		owner := v.Labels[runtime.LabelOwner]
		if owner == "" || !strings.HasPrefix(v.Name, "wb-home-") {
			continue
		}
		seen[v.Name] = true
		if v.Bytes < 0 {
			continue // not measured this time: keep what we have
		}
		u, err := m.store.UserByHomeName(ctx, owner)
		if err != nil {
			continue
		}
		size := (v.Bytes + bytesPerMilliGiB - 1) / bytesPerMilliGiB
		if err := m.store.RecordVolume(ctx, u.ID, v.Name, size, now, v.CreatedAt, resizeMilliGiB); err != nil {
			m.log.Warn("storage metering: record", "volume", v.Name, "err", err)
		}
	}
	for name, iv := range open {
		// Gone, and not by the portal's hand: the portal ends a volume's
		// interval when it removes one (homeRemoved), after this read
		// only while the removal is in flight.
		if !seen[name] && !m.portalRemovingHome(name) {
			username := ""
			if u, err := m.store.UserByID(ctx, iv.UserID); err == nil {
				username = u.Username
			}
			m.homeVanished(ctx, iv.UserID, username, name, nil)
		}
	}
	m.noteStorageQuotas(ctx)
}

// homeRemoved ends what the portal knew of userID's home volume, which
// it has just removed: its storage interval ends at the removal (metering
// would end it at its last sighting), and a start that makes it anew is
// no loss to tell about.
func (m *Manager) homeRemoved(ctx context.Context, userID int64, volume string) {
	if err := m.store.RemovedHome(ctx, userID, volume, m.now()); err != nil {
		m.log.Warn("storage metering: close", "volume", volume, "err", err)
	}
}
