package orchestrator

import (
	"context"
	"sync"
	"time"

	"workbench/models"
	"workbench/orchestrator/gpu"
)

// unitIdleRuns follows GPU-idle runs of units whose figures are not a
// whole GPU's: a shared slice's holder (its own processes' SM
// utilisation) and a MIG instance (its own utilisation, where the driver
// answers it per instance). Keyed by workbench and unit UUID; an entry is
// the time of the first sample of the current unbroken run of readable
// samples below the sampler's threshold. An unreadable sample, or a
// failed attribution, ends the run: missing data is never idleness.
type unitIdleRuns struct {
	mu    sync.Mutex
	since map[string]time.Time
}

func unitIdleKey(wbID, unitUUID string) string { return wbID + "\x00" + unitUUID }

func (r *unitIdleRuns) get(wbID, unitUUID string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.since[unitIdleKey(wbID, unitUUID)]
	return t, ok
}

// note folds one round of attributed readings in.
func (r *unitIdleRuns) note(uses []GPUUse, threshold uint32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.since == nil {
		r.since = map[string]time.Time{}
	}
	seen := map[string]bool{}
	for _, u := range uses {
		for _, uu := range u.Units {
			if uu.Holder.WorkbenchID == "" {
				continue
			}
			k := unitIdleKey(uu.Holder.WorkbenchID, uu.UUID)
			if !uu.Sample.Readable(gpu.FieldUtil) || uu.Sample.UtilPercent >= threshold {
				continue // busy or unreadable: not seen, so the run ends below
			}
			seen[k] = true
			if _, ok := r.since[k]; !ok {
				r.since[k] = uu.Sample.At
			}
		}
	}
	for k := range r.since {
		if !seen[k] {
			delete(r.since, k)
		}
	}
}

// clear ends every run (the attribution could not be made).
func (r *unitIdleRuns) clear() {
	r.mu.Lock()
	defer r.mu.Unlock()
	clear(r.since)
}

// noteUnitIdle runs after each sampler collection; a failed collection
// ends every run (could not read: never idle).
func (m *Manager) noteUnitIdle(ctx context.Context, collectErr error) {
	if m.pool == nil || m.pool.sampler == nil {
		return
	}
	if collectErr != nil {
		m.unitIdle.clear()
		return
	}
	// Most collections find no MIG instance or slice bound and no MIG
	// GPU: one query then spares the full attribution (inventory read,
	// workbenches).
	t, err := m.pool.cachedTables(ctx)
	if err == nil {
		m.holders.note(t.held, func(uuid string) (time.Time, bool) {
			smp, ok := m.pool.sampler.Latest(uuid)
			return smp.At, ok
		})
		if m.opt.GPUWorkIsActivity {
			m.touchGPUWork(t.held)
		}
	}
	if err == nil && !hasUnitKind(t.bound, models.UnitMIG, models.UnitSlice) && !m.pool.sampler.AnyMIG() {
		m.unitIdle.clear()
		return
	}
	uses, err := m.GPUUse(ctx)
	if err != nil {
		m.unitIdle.clear()
		return
	}
	m.unitIdle.note(uses, m.pool.sampler.IdleThreshold())
	if m.opt.GPUWorkIsActivity {
		m.touchUnitWork(uses, m.pool.sampler.IdleThreshold())
	}
	m.unitHist.note(uses, m.pool.sampler.Capacity(), m.pool.sampler.Previous)
}

// WatchUnitIdle makes the sampler report each collection to the manager,
// which follows per-unit idle runs (MIG instances, slice holders).
// NewManager calls it; tests that build a Manager by hand call it too.
func (m *Manager) WatchUnitIdle() {
	if m.pool != nil && m.pool.sampler != nil {
		m.pool.sampler.AfterCollect(m.noteUnitIdle)
	}
}

// unitIdleSince is when a unit wb holds has been idle since: a whole GPU's
// own idle run, or the unit's (slice holder, MIG instance) own.
func (m *Manager) unitIdleSince(wb *models.Workbench, u models.Unit) (time.Time, bool) {
	if u.Kind == models.UnitGPU || u.Kind == "" {
		return m.pool.sampler.IdleSince(u.UUID)
	}
	return m.unitIdle.get(wb.ID, u.UUID)
}

// hasUnitKind reports whether any bound unit is of one of kinds.
func hasUnitKind(bound []models.UnitHolder, kinds ...string) bool {
	for _, b := range bound {
		for _, k := range kinds {
			if b.Kind == k {
				return true
			}
		}
	}
	return false
}
