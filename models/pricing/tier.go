package pricing

import "sort"

// TierPreemptible is the price tier of preemptible runs (issue 12 §3).
const TierPreemptible = "preemptible"

// TierKey names the schedule of a GPU model at a price tier:
// "gpu@preemptible|<model>". The standard tier is ScheduleKey.
func TierKey(tier, gpuModel string) string { return UnitTierKey(GPU, tier, gpuModel) }

// UnitTierKey names the schedule of a unit kind's rate at a price tier:
// "gpu@preemptible|<model>", "mig@preemptible|<profile>",
// "slice@preemptible|<model>" (a preemptible MIG instance or slice is
// discounted like a whole GPU). The standard tier is ScheduleKey.
func UnitTierKey(resource, tier, model string) string {
	if tier == "" {
		return ScheduleKey(resource, model)
	}
	return resource + "@" + tier + "|" + model
}

// Discounted is the schedule of a GPU rate at a tier whose discount (in
// percent, itself versioned: Micros holds the percentage) changes over
// time: at every change of either, the rate is gpu × (100 − discount) / 100,
// rounded down to the micro-unit (the discount never costs the user a
// micro). Before the tier has any discount it is the full rate.
func Discounted(gpu, discountPct Schedule) Schedule {
	times := map[int64]Rate{}
	for _, r := range gpu {
		times[r.Effective.UnixNano()] = Rate{Effective: r.Effective}
	}
	for _, r := range discountPct {
		times[r.Effective.UnixNano()] = Rate{Effective: r.Effective}
	}
	out := make(Schedule, 0, len(times))
	for _, at := range times {
		g, ok := gpu.At(at.Effective)
		if !ok {
			continue // no GPU rate yet: unpriced, as the standard tier
		}
		pct := int64(0)
		if d, ok := discountPct.At(at.Effective); ok {
			pct = min(max(d.Micros, 0), 100)
		}
		out = append(out, Rate{Effective: at.Effective, Micros: g.Micros * (100 - pct) / 100})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Effective.Before(out[j].Effective) })
	return out
}
