package orchestrator

import (
	"strconv"
	"strings"

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
	// The unit's share of the GPU's measured energy is ShareNum/ShareDen
	// (ShareDen 0: no share can be made), worked out by ShareBasis; see
	// migShares and sliceShares.
	ShareNum, ShareDen int64
	ShareBasis         string
	// Units is how many units of the GPU this is (a MIG instance: 1; a
	// slice holder: the slices it holds), GPUUnits how many the GPU has
	// (its MIG instances; its slices): the utilisation dashboard counts a
	// held unit as Units/GPUUnits of a GPU.
	Units, GPUUnits int64
}

// How a unit's share of its GPU's energy is made (docs/telemetry.md).
const (
	// ShareMIGUtil: MIG instances by compute slices × their own SM
	// utilisation, where every instance of the GPU has it read.
	ShareMIGUtil = "mig_slices_x_util"
	// ShareMIGSlices: MIG instances by compute slices (the usual case:
	// drivers give no per-instance utilisation).
	ShareMIGSlices = "mig_slices"
	// ShareProcessUtil: slice holders by their processes' share of the
	// SM utilisation of every process on the GPU.
	ShareProcessUtil = "process_sm_util"
	// ShareEqualSlices: slice holders by the slices they hold, of the
	// GPU's slices, where no process used the SMs or it was not read.
	ShareEqualSlices = "equal_slices"
)

// unitFields are the readings a unit can have of its own.
const unitFields = gpu.FieldUtil | gpu.FieldMemUtil | gpu.FieldMemory

// allFields is every reading of a Sample.
const allFields = gpu.FieldAll

// unitUses lists g's MIG instances with their readings, or the holders of
// its slices with their processes' figures.
func unitUses(g PoolGPU, u GPUUse, a *attribution) []UnitUse {
	holderOf := a.holderOf
	var out []UnitUse
	if g.MIGEnabled {
		held := map[string]string{}
		for _, pu := range g.Units {
			held[pu.UUID] = pu.WorkbenchID
		}
		for _, mi := range g.MIG {
			uu := UnitUse{Kind: models.UnitMIG, UUID: mi.UUID, Profile: mi.Profile, GPUInstanceID: mi.GPUInstanceID,
				Holder: holderOf(held[mi.UUID]), Sample: gpu.Sample{UUID: mi.UUID, At: u.Sample.At, Unread: allFields},
				Units: 1, GPUUnits: int64(len(g.MIG))}
			for _, ms := range u.Sample.MIG {
				if u.HasSample && ms.UUID == mi.UUID {
					uu.Sample.UtilPercent, uu.Sample.MemUtilPercent = ms.UtilPercent, ms.MemUtilPercent
					uu.Sample.MemUsedMiB, uu.Sample.MemFreeMiB = ms.MemUsedMiB, ms.MemFreeMiB
					uu.Sample.Unread = allFields&^unitFields | ms.Unread&unitFields
				}
			}
			out = append(out, uu)
		}
		migShares(out)
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
	sliceShares(out, g, u)
	return out
}

// migSlices is the compute slices of a MIG profile: "3g.40gb" is 3, a
// compute instance inside a larger GPU instance ("1c.3g.40gb") is 1.
func migSlices(profile string) int64 {
	p := profile
	if c, rest, ok := strings.Cut(p, "c."); ok && !strings.Contains(c, ".") {
		if n, err := strconv.Atoi(c); err == nil && n > 0 {
			return int64(n)
		}
		p = rest
	}
	g, _, _ := strings.Cut(p, "g.")
	if n, err := strconv.Atoi(g); err == nil && n > 0 {
		return int64(n)
	}
	return 1
}

// migShares splits a MIG GPU's energy among its instances (held or not:
// a free instance's share is nobody's): by compute slices × each
// instance's own SM utilisation where every instance has it read and some
// instance used the SMs, else by compute slices alone. The GPU's
// unpartitioned slices draw for the instances made.
func migShares(units []UnitUse) {
	var slices, weighted int64
	allRead := true
	for _, uu := range units {
		n := migSlices(uu.Profile)
		slices += n
		if uu.Sample.Readable(gpu.FieldUtil) {
			weighted += n * int64(uu.Sample.UtilPercent)
		} else {
			allRead = false
		}
	}
	for i := range units {
		uu := &units[i]
		n := migSlices(uu.Profile)
		if allRead && weighted > 0 {
			uu.ShareNum, uu.ShareDen, uu.ShareBasis = n*int64(uu.Sample.UtilPercent), weighted, ShareMIGUtil
		} else {
			uu.ShareNum, uu.ShareDen, uu.ShareBasis = n, slices, ShareMIGSlices
		}
	}
}

// sliceShares splits a shared GPU's energy among its slice holders: by
// their processes' share of the SM utilisation of every process on the
// GPU (a process in no container of ours keeps its share: nobody's),
// where per-process utilisation was read and some process used the SMs;
// else equally by slice (a free slice's share is nobody's).
func sliceShares(units []UnitUse, g PoolGPU, u GPUUse) {
	var total int64
	perHolder := map[string]int64{}
	read := u.HasSample && u.Sample.Readable(gpu.FieldProcesses) && u.Sample.Readable(gpu.FieldProcessUtil)
	if read {
		for _, p := range u.Processes {
			total += int64(p.SMUtilPercent)
			if p.Holder.WorkbenchID != "" {
				perHolder[p.Holder.WorkbenchID] += int64(p.SMUtilPercent)
			}
		}
	}
	slices := int64(g.SharedSlices)
	held := map[string]int64{}
	var listed int64
	for _, pu := range g.Units {
		if pu.Kind == models.UnitSlice {
			listed++
			if pu.WorkbenchID != "" {
				held[pu.WorkbenchID]++
			}
		}
	}
	slices = max(slices, listed)
	for i := range units {
		uu := &units[i]
		uu.Units, uu.GPUUnits = max(held[uu.Holder.WorkbenchID], 1), slices
		if read && total > 0 {
			uu.ShareNum, uu.ShareDen, uu.ShareBasis = perHolder[uu.Holder.WorkbenchID], total, ShareProcessUtil
		} else if slices > 0 {
			uu.ShareNum, uu.ShareDen, uu.ShareBasis = max(held[uu.Holder.WorkbenchID], 1), slices, ShareEqualSlices
		}
	}
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
