package pricing

import (
	"strings"
	"testing"
	"time"
)

// TestEstimateUnitKinds: a MIG or slice flavor's shape is priced at its own
// kind's rate (per profile-hour, per slice-hour) by the same PriceShape as
// the ledger, never at the whole GPU's; a missing kind rate names the field.
func TestEstimateUnitKinds(t *testing.T) {
	p := testPrices(60 * time.Second)
	epoch := time.Unix(0, 0).UTC()
	p.Schedules[ScheduleKey(MIG, "1g.10gb")] = Schedule{{Effective: epoch, Micros: 430_000}}
	p.Schedules[ScheduleKey(Slice, h100)] = Schedule{{Effective: epoch, Micros: 750_000}}
	hours := ratInt(10)
	for _, tc := range []struct {
		shape   Shape
		perHour int64
	}{
		{Shape{GPUModel: h100, GPUCount: 2, UnitKind: MIG, UnitProfile: "1g.10gb", CPUMilli: 1000, MemoryMiB: 1024}, 2*430_000 + 20_000 + 5_000},
		{Shape{GPUModel: h100, GPUCount: 1, UnitKind: Slice, CPUMilli: 1000, MemoryMiB: 1024}, 750_000 + 20_000 + 5_000},
		{Shape{GPUModel: h100, GPUCount: 1, CPUMilli: 1000, MemoryMiB: 1024}, 3_000_000 + 20_000 + 5_000},
	} {
		in := EstimateInput{Shape: tc.shape, Duration: DurationTotal, TotalHours: hours}
		res, errs := Estimate(in, p, t0)
		if errs != nil {
			t.Fatalf("%+v: %v", tc.shape, errs)
		}
		if res.PerHour != tc.perHour || res.Total != 10*tc.perHour {
			t.Errorf("%s: per hour %d total %d, want %d and %d", tc.shape.UnitKind, res.PerHour, res.Total, tc.perHour, 10*tc.perHour)
		}
		if want, _ := UnitRate(tc.shape); res.Resources[0].Resource != want {
			t.Errorf("first line priced as %s", res.Resources[0].Resource)
		}
	}
	in := EstimateInput{Shape: Shape{GPUModel: h100, GPUCount: 1, UnitKind: MIG, UnitProfile: "3g.40gb", CPUMilli: 1000, MemoryMiB: 1024},
		Duration: DurationTotal, TotalHours: hours}
	if _, errs := Estimate(in, p, t0); !strings.Contains(errs["gpu_model"], "mig rate") {
		t.Fatalf("unpriced MIG profile: %v", errs)
	}
}
