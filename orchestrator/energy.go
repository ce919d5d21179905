package orchestrator

import (
	"workbench/orchestrator/gpu"
)

// energyBetween is the energy (mJ) a GPU drew between two consecutive
// samples, and whether it could be worked out.
//
//   - Both energy counters read and the counter went forward: the exact
//     difference.
//   - The counter went back: NVML's total-energy counter restarts from 0
//     when the driver reloads (a uint64 of mJ does not wrap in practice,
//     but a wrap looks the same). What the counter shows now was drawn
//     since the restart; the part between the earlier sample and the
//     restart is unknown. Where both power readings exist, the mean power
//     over the gap is a whole-gap estimate, so the larger of the two is
//     taken (the counter is a floor, the estimate fills the lost part).
//   - A counter unread: the mean of the two power readings over the gap.
//   - Neither: nothing (a gap, never a made-up figure).
func energyBetween(prev, cur gpu.Sample) (int64, bool) {
	dtMs := cur.At.Sub(prev.At).Milliseconds()
	if dtMs <= 0 {
		return 0, false
	}
	powerOK := prev.Readable(gpu.FieldPower) && cur.Readable(gpu.FieldPower)
	// mW × ms / 1000 = mJ.
	estimate := (int64(prev.PowerMilliW) + int64(cur.PowerMilliW)) / 2 * dtMs / 1000
	if prev.Readable(gpu.FieldEnergy) && cur.Readable(gpu.FieldEnergy) {
		if cur.EnergyMilliJ >= prev.EnergyMilliJ {
			return int64(cur.EnergyMilliJ - prev.EnergyMilliJ), true
		}
		since := int64(cur.EnergyMilliJ)
		if powerOK && estimate > since {
			return estimate, true
		}
		return since, true
	}
	if powerOK {
		return estimate, true
	}
	return 0, false
}
