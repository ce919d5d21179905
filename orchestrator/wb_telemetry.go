package orchestrator

import (
	"context"
	"time"

	"workbench/models"
	"workbench/orchestrator/gpu"
)

// SeriesMinutes is the span of a workbench's per-minute series (its
// sparklines): the last hour, one point a minute.
const SeriesMinutes = 60

// MinutePoint is one minute of a unit's series. A figure with no readable
// sample in the minute is nil ("not available"), never 0.
type MinutePoint struct {
	Minute      time.Time
	UtilPercent *float64 // mean SM utilisation of the readable samples
	MemUsedMiB  *int64   // the minute's peak
	EnergyMJ    *int64   // measured (whole GPU) or the unit's share
}

// WBUnitTelemetry is one unit a workbench holds, with its own figures.
type WBUnitTelemetry struct {
	Kind          string // models.UnitGPU, UnitMIG or UnitSlice
	UUID          string // the GPU's, the MIG instance's, or the GPU's for a slice
	GPUUUID       string
	Profile       string
	GPUInstanceID int // MIG only; -1 otherwise
	// Latest is the unit's newest reading (HasLatest false: none yet).
	// For a MIG instance or a slice holder only utilisation and memory
	// are its own; everything else is unread.
	Latest    gpu.Sample
	HasLatest bool
	// ShareBasis is how the unit's share of its GPU's energy is made
	// (MIG, slice); "" for a whole GPU, whose energy is measured.
	ShareBasis string
	Series     []MinutePoint
}

// WBTelemetry is what a workbench's GPUs do: per unit, its latest reading
// and its last hour, and the energy booked to it.
type WBTelemetry struct {
	Units []WBUnitTelemetry
	// RunEnergy is this run's (the open usage interval's) energy; Energy
	// every run's. Measured false: nothing measured ("not available").
	RunEnergy models.EnergyTotals
	Energy    models.EnergyTotals
	GPUIdle   GPUIdle
}

// WorkbenchTelemetry reports wb's GPU units at the manager's now.
func (m *Manager) WorkbenchTelemetry(ctx context.Context, wb *models.Workbench) (WBTelemetry, error) {
	var t WBTelemetry
	var err error
	if t.Energy, err = m.store.WorkbenchEnergy(ctx, wb.ID); err != nil {
		return t, err
	}
	if iv, err := m.store.OpenIntervalOf(ctx, wb.ID); err == nil {
		if t.RunEnergy, err = m.store.IntervalEnergy(ctx, iv.ID); err != nil {
			return t, err
		}
	}
	if wb.State != models.StateRunning || m.pool == nil || m.pool.sampler == nil {
		return t, nil
	}
	t.GPUIdle = m.GPUIdle(ctx, wb)
	now := m.now()
	end := now.Truncate(time.Minute).Add(time.Minute) // the current minute included
	from := end.Add(-SeriesMinutes * time.Minute)
	if wb.StartedAt != nil && wb.StartedAt.After(from) {
		from = wb.StartedAt.Truncate(time.Minute)
	}
	m.rollupMu.Lock()
	rolled := m.rolledUpTo
	m.rollupMu.Unlock()
	if rolled.Before(from) {
		rolled = from
	}
	units := wb.Units
	if len(units) == 0 {
		for _, uuid := range wb.GPUs {
			units = append(units, models.Unit{Kind: models.UnitGPU, UUID: uuid, GPUUUID: uuid})
		}
	}
	seen := map[string]bool{}
	for _, u := range units {
		if seen[u.Kind+u.UUID] {
			continue // two slices of one GPU: one holder's figures
		}
		seen[u.Kind+u.UUID] = true
		ut, err := m.unitTelemetry(ctx, wb, u, from, rolled, end)
		if err != nil {
			return t, err
		}
		t.Units = append(t.Units, ut)
	}
	return t, nil
}

// unitTelemetry: rolled-up minutes [from, rolled) from the database, the
// rest from the in-memory history folded the same way.
func (m *Manager) unitTelemetry(ctx context.Context, wb *models.Workbench, u models.Unit, from, rolled, end time.Time) (WBUnitTelemetry, error) {
	gpuUUID := u.GPUUUID
	if gpuUUID == "" {
		gpuUUID = u.UUID
	}
	ut := WBUnitTelemetry{Kind: u.Kind, UUID: u.UUID, GPUUUID: gpuUUID, Profile: u.Profile, GPUInstanceID: -1}
	if ut.Kind == "" {
		ut.Kind = models.UnitGPU
	}
	points := map[int64]MinutePoint{}
	hist := m.pool.sampler.History(gpuUUID)
	var started time.Time
	if wb.StartedAt != nil {
		started = *wb.StartedAt
	}
	if ut.Kind == models.UnitGPU {
		rows, err := m.store.GPUMinutesOfGPUs(ctx, from, rolled, []string{gpuUUID})
		if err != nil {
			return ut, err
		}
		var recent []gpu.Sample
		for _, s := range hist {
			if !s.At.Before(started) {
				recent = append(recent, s)
			}
		}
		// The first kept sample's energy needs the one before it.
		if n := len(hist) - len(recent); n > 0 && len(recent) > 0 {
			recent = append([]gpu.Sample{hist[n-1]}, recent...)
		}
		lo := rolled
		if started.After(lo) {
			lo = started
		}
		rows = append(rows, rollupMinutes(gpuUUID, "", func(time.Time) string { return wb.ID }, recent, lo, end)...) // since it started: its own
		for _, r := range rows {
			if r.WorkbenchID != wb.ID {
				continue // another holder's minute of this GPU
			}
			points[r.Minute] = minutePoint(r.Minute, r.UtilSamples, r.UtilSum, r.MemUsedMaxMiB, memReadIn(hist, r.Minute), r.EnergyMJ, r.EnergySamples)
		}
		if n := len(hist); n > 0 {
			ut.Latest, ut.HasLatest = hist[n-1], true
			if !m.pool.sampler.Fresh(ut.Latest.At) {
				ut.Latest = ut.Latest.Stale() // no current reading: could not read
			}
		}
	} else {
		rows, err := m.store.GPUUnitMinutes(ctx, from, rolled, []string{wb.ID})
		if err != nil {
			return ut, err
		}
		ticks := m.unitHist.ticks(gpuUUID)
		rows = append(rows, rollupUnitMinutes(gpuUUID, "", ticks, rolled, end)...)
		for _, r := range rows {
			if r.UnitUUID != u.UUID || r.WorkbenchID != wb.ID {
				continue
			}
			points[r.Minute] = minutePoint(r.Minute, r.UtilSamples, r.UtilSum, r.MemUsedMaxMiB, r.MemSamples > 0, r.EnergyMJ, r.EnergySamples)
		}
		for i := len(ticks) - 1; i >= 0 && !ut.HasLatest; i-- {
			for _, uu := range ticks[i].Units {
				if uu.UUID == u.UUID && uu.Holder.WorkbenchID == wb.ID {
					ut.Latest, ut.HasLatest = uu.Sample, true
					if !m.pool.sampler.Fresh(ut.Latest.At) {
						ut.Latest = ut.Latest.Stale()
					}
					ut.GPUInstanceID, ut.ShareBasis = uu.GPUInstanceID, uu.ShareBasis
					if ut.Profile == "" {
						ut.Profile = uu.Profile
					}
					break
				}
			}
		}
	}
	for mt := from; mt.Before(end); mt = mt.Add(time.Minute) {
		p, ok := points[mt.Unix()]
		if !ok {
			p = MinutePoint{Minute: mt}
		}
		ut.Series = append(ut.Series, p)
	}
	return ut, nil
}

// memReadIn reports whether a whole GPU's memory was read in the minute;
// gpu_minutes has no count of memory readings, so a rolled-up minute
// (no longer in the history) counts as read when it has a peak.
func memReadIn(hist []gpu.Sample, minute int64) bool {
	for _, s := range hist {
		if s.At.Truncate(time.Minute).Unix() == minute && s.Readable(gpu.FieldMemory) {
			return true
		}
	}
	return false
}

func minutePoint(minute, utilSamples, utilSum, memMax int64, memRead bool, mJ, energySamples int64) MinutePoint {
	p := MinutePoint{Minute: time.Unix(minute, 0).UTC()}
	if utilSamples > 0 {
		v := float64(utilSum) / float64(utilSamples)
		p.UtilPercent = &v
	}
	if memRead || memMax > 0 {
		p.MemUsedMiB = &memMax
	}
	if energySamples > 0 {
		p.EnergyMJ = &mJ
	}
	return p
}
