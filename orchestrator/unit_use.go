package orchestrator

import (
	"workbench/models"
	"workbench/orchestrator/gpu"
)

// UnitUse is one unit of a GPU handed out in units, with the figures that
// are its own:
//
//   - a MIG instance: what NVML reads through the instance's MIG device
//     handle (memory; utilisation where the driver answers it per
//     instance, unread otherwise), and the holder of that instance;
//   - a shared slice's holder: the sum over that holder's own processes
//     on the GPU (memory they use, their SM utilisation), traced through
//     their cgroups; a holder with no process on the GPU reads 0.
//
// Figures the unit has no reading of of its own are in Unread, never 0:
// power, temperature, energy, clocks and ECC are the whole GPU's only.
type UnitUse struct {
	Kind          string // models.UnitMIG or models.UnitSlice
	UUID          string // the MIG UUID; the GPU's UUID for a slice
	Profile       string // MIG profile, e.g. "1g.10gb"
	GPUInstanceID int    // MIG GPU instance ID (dcgm-exporter's GPU_I_ID); -1 for a slice
	Holder        Holder
	// Sample carries the unit's own readings in gpu.Sample form (UUID,
	// utilisation, memory), with every other field unread.
	Sample gpu.Sample
}

// unitFields are the readings a unit can have of its own.
const unitFields = gpu.FieldUtil | gpu.FieldMemUtil | gpu.FieldMemory

// allFields is every reading of a Sample.
const allFields = gpu.FieldProcessUtil<<1 - 1

// unitUses lists g's MIG instances with their readings, or the holders of
// its slices with their processes' figures.
func unitUses(g PoolGPU, u GPUUse, byID map[string]*models.Workbench, holders *holderCache) []UnitUse {
	holderOf := func(id string) Holder {
		if w := byID[id]; w != nil {
			return holders.of(w)
		}
		return Holder{}
	}
	var out []UnitUse
	if g.MIGEnabled {
		held := map[string]string{}
		for _, pu := range g.Units {
			held[pu.UUID] = pu.WorkbenchID
		}
		for _, mi := range g.MIG {
			uu := UnitUse{Kind: models.UnitMIG, UUID: mi.UUID, Profile: mi.Profile, GPUInstanceID: mi.GPUInstanceID,
				Holder: holderOf(held[mi.UUID]), Sample: gpu.Sample{UUID: mi.UUID, At: u.Sample.At, Unread: allFields}}
			for _, ms := range u.Sample.MIG {
				if u.HasSample && ms.UUID == mi.UUID {
					uu.Sample.UtilPercent, uu.Sample.MemUtilPercent = ms.UtilPercent, ms.MemUtilPercent
					uu.Sample.MemUsedMiB, uu.Sample.MemFreeMiB = ms.MemUsedMiB, ms.MemFreeMiB
					uu.Sample.Unread = allFields&^unitFields | ms.Unread&unitFields
				}
			}
			out = append(out, uu)
		}
		return out
	}
	seen := map[string]bool{}
	for _, pu := range g.Units {
		if pu.Kind != models.UnitSlice || pu.WorkbenchID == "" || seen[pu.WorkbenchID] {
			continue
		}
		seen[pu.WorkbenchID] = true
		out = append(out, UnitUse{Kind: models.UnitSlice, UUID: g.UUID, GPUInstanceID: -1,
			Holder: holderOf(pu.WorkbenchID), Sample: sliceSample(u, pu.WorkbenchID)})
	}
	return out
}

// sliceSample sums the figures of wbID's own processes on a shared GPU.
// Memory is readable when the process list is; utilisation when the
// per-process utilisation is too. Memory-copy utilisation and free memory
// have no per-process figure: unread.
func sliceSample(u GPUUse, wbID string) gpu.Sample {
	s := gpu.Sample{UUID: u.UUID, At: u.Sample.At, Unread: allFields &^ (gpu.FieldUtil | gpu.FieldMemory)}
	if !u.HasSample || !u.Sample.Readable(gpu.FieldProcesses) {
		s.Unread = allFields
		return s
	}
	if !u.Sample.Readable(gpu.FieldProcessUtil) {
		s.Unread |= gpu.FieldUtil
	}
	var util uint32
	for _, p := range u.Processes {
		if p.Holder.WorkbenchID != wbID {
			continue
		}
		s.MemUsedMiB += p.UsedMemMiB
		util += p.SMUtilPercent
	}
	if s.Readable(gpu.FieldUtil) {
		s.UtilPercent = min(util, 100)
	}
	return s
}
