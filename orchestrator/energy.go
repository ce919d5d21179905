package orchestrator

import (
	"workbench/orchestrator/gpu"
)

// energyBetween is the energy (mJ) a GPU drew between two consecutive
// samples, and whether it was measured. Energy is measured from NVML's
// total-energy counter only: a gap where either counter reading is
// missing has no energy (ok false) — never 0 J and never a guess from
// power readings, which NVML averages over about a second and which a
// 15 s sampler would under-sample.
//
//   - Both counters read and the counter went forward: the exact
//     difference.
//   - The counter went back: NVML's total-energy counter restarts from 0
//     when the driver reloads (a uint64 of mJ does not wrap in practice,
//     but a wrap looks the same). What the counter shows now was drawn
//     since the restart; the part between the earlier sample and the
//     restart is unknown. Where both power readings exist, the mean power
//     over the gap is a whole-gap estimate, so the larger of the two is
//     taken (the counter is a floor, the estimate fills the lost part).
func energyBetween(prev, cur gpu.Sample) (int64, bool) {
	dtMs := cur.At.Sub(prev.At).Milliseconds()
	if dtMs <= 0 || !prev.Readable(gpu.FieldEnergy) || !cur.Readable(gpu.FieldEnergy) {
		return 0, false
	}
	if cur.EnergyMilliJ >= prev.EnergyMilliJ {
		return int64(cur.EnergyMilliJ - prev.EnergyMilliJ), true
	}
	since := int64(cur.EnergyMilliJ)
	if prev.Readable(gpu.FieldPower) && cur.Readable(gpu.FieldPower) {
		// mW × ms / 1000 = mJ.
		if estimate := (int64(prev.PowerMilliW) + int64(cur.PowerMilliW)) / 2 * dtMs / 1000; estimate > since {
			return estimate, true
		}
	}
	return since, true
}
