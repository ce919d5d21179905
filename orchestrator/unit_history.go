package orchestrator

import (
	"slices"
	"sync"
	"time"

	"workbench/models"
	"workbench/orchestrator/gpu"
)

// unitTick is one collection's attributed readings of a GPU's units (MIG
// instances, slice holders) with their energy shares: attribution needs
// the processes' cgroups, which are gone once a process ends, so it is
// made at collection time and kept here for the per-minute rollup.
type unitTick struct {
	At    time.Time
	Units []UnitUse
	// GPUEnergyMJ is the energy the GPU drew since its previous sample,
	// worked out when the tick is noted (the previous sample is then
	// surely still in the sampler's history); Measured false: none.
	GPUEnergyMJ int64
	Measured    bool
}

// unitHistory keeps, per GPU, the last ticks (as many as the sampler
// keeps samples: bounded memory).
type unitHistory struct {
	mu    sync.Mutex
	byGPU map[string][]unitTick
}

// note appends one collection's units. A GPU with no units, or no sample,
// adds nothing. prev gives a GPU's sample before its latest.
func (h *unitHistory) note(uses []GPUUse, capacity int, prev func(uuid string) (gpu.Sample, bool)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byGPU == nil {
		h.byGPU = map[string][]unitTick{}
	}
	capacity = max(capacity, 1)
	for _, u := range uses {
		if !u.HasSample || len(u.Units) == 0 {
			continue
		}
		ts := h.byGPU[u.UUID]
		if n := len(ts); n > 0 && !u.Sample.At.After(ts[n-1].At) {
			continue // the same sample again (or an older one): once only
		}
		tk := unitTick{At: u.Sample.At, Units: slices.Clone(u.Units)}
		if p, ok := prev(u.UUID); ok {
			tk.GPUEnergyMJ, tk.Measured = energyBetween(p, u.Sample)
		}
		ts = append(ts, tk)
		if len(ts) > capacity {
			ts = slices.Clone(ts[len(ts)-capacity:]) // let the dropped ticks go
		}
		h.byGPU[u.UUID] = ts
	}
}

// ticks returns a copy of the GPU's ticks, oldest first.
func (h *unitHistory) ticks(gpuUUID string) []unitTick {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.byGPU[gpuUUID])
}

// rollupUnitMinutes folds the ticks in [from, to) into one row per unit,
// holder and minute. A unit's energy for a tick is its share (ShareNum /
// ShareDen) of the energy its GPU drew since the GPU's previous sample
// (energyBetween): a gap whose counter readings are missing gives no
// energy, never 0 J.
func rollupUnitMinutes(gpuUUID, model string, ticks []unitTick, from, to time.Time) []models.GPUUnitMinute {
	type key struct {
		unit, wb string
		minute   int64
	}
	at := map[key]int{}
	var out []models.GPUUnitMinute
	for _, tk := range ticks {
		if tk.At.Before(from) || !tk.At.Before(to) {
			continue
		}
		minute := tk.At.Truncate(time.Minute).Unix()
		for _, uu := range tk.Units {
			k := key{uu.UUID, uu.Holder.WorkbenchID, minute}
			j, ok := at[k]
			if !ok {
				j = len(out)
				at[k] = j
				out = append(out, models.GPUUnitMinute{UnitUUID: uu.UUID, WorkbenchID: uu.Holder.WorkbenchID, Minute: minute,
					GPUUUID: gpuUUID, Kind: uu.Kind, Profile: uu.Profile, GPUModel: model, Units: uu.Units, GPUUnits: uu.GPUUnits})
			}
			foldUnitSample(&out[j], uu, tk.GPUEnergyMJ, tk.Measured)
		}
	}
	return out
}

// foldUnitSample adds one reading of a unit to its minute's row.
func foldUnitSample(r *models.GPUUnitMinute, uu UnitUse, gpuMJ int64, measured bool) {
	r.Samples++
	if uu.Sample.Readable(gpu.FieldUtil) {
		r.UtilSamples++
		r.UtilSum += int64(uu.Sample.UtilPercent)
	} else {
		r.UnreadSamples++
	}
	if uu.Sample.Readable(gpu.FieldMemory) {
		r.MemSamples++
		r.MemUsedMaxMiB = max(r.MemUsedMaxMiB, int64(uu.Sample.MemUsedMiB))
	}
	if measured && uu.ShareDen > 0 {
		r.EnergyMJ += gpuMJ * uu.ShareNum / uu.ShareDen
		r.EnergySamples++
		r.EnergyBasis = uu.ShareBasis
	}
}
