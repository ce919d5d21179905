package orchestrator

import (
	"testing"
	"time"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/orchestrator/gpu"
)

// MIG instances and shared slices count in the GPU-hour rows as the
// fraction of their GPU they are (units held ÷ units on the GPU): a MIG
// or shared GPU is no longer capacity nobody held while its units are
// held, unheld cost prices only its free fraction, and the holders appear
// in the user, group and top-idle rows. Figures recomputed by hand from a
// fixture of samples and unit allocations (rolled up as the manager does).
func TestUtilisationCountsMIGAndSliceHolders(t *testing.T) {
	day0 := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	t10 := day0.Add(10 * time.Hour)
	to := day0.AddDate(0, 0, 1)
	const h100, a100 = "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"
	const n = 60 * 4 // an hour of samples every 15 s

	// GPU rows: a MIG GPU (whole-GPU utilisation NOT_SUPPORTED, as NVML
	// answers on MIG) and a shared GPU; neither is held whole.
	var gpuSamples []gpu.Sample
	for i := 0; i < n; i++ {
		gpuSamples = append(gpuSamples, gpu.Sample{At: t10.Add(time.Duration(i) * 15 * time.Second), Unread: gpu.FieldUtil | gpu.FieldEnergy})
	}
	var rows []models.GPUMinute
	rows = append(rows, rollupMinutes("GPU-M", h100, func(time.Time) string { return "" }, gpuSamples, day0, to)...)
	rows = append(rows, rollupMinutes("GPU-S", a100, func(time.Time) string { return "" }, gpuSamples, day0, to)...)

	// Units: GPU-M has four 1g instances; ada's "mig" holds mig-1 at 40%
	// (this driver answers per instance) with a quarter of 4 000 mJ a
	// sample as its energy share, bob's "sim" holds mig-2 whose
	// utilisation is unread, mig-3 and mig-4 are free. GPU-S is shared in
	// four slices; ada's "slice" holds two of them, its processes at 4%.
	var migTicks, sliceTicks []unitTick
	for i := 0; i < n; i++ {
		at := t10.Add(time.Duration(i) * 15 * time.Second)
		mig := func(uuid, wb string, util uint32, unread gpu.Field) UnitUse {
			return UnitUse{Kind: models.UnitMIG, UUID: uuid, Profile: "1g.10gb", Holder: Holder{WorkbenchID: wb},
				Sample: gpu.Sample{UUID: uuid, At: at, UtilPercent: util, Unread: unread}, ShareNum: 1, ShareDen: 4, ShareBasis: ShareMIGSlices,
				Units: 1, GPUUnits: 4}
		}
		migTicks = append(migTicks, unitTick{At: at, GPUEnergyMJ: 4000, Measured: true, Units: []UnitUse{
			mig("mig-1", "wb-m1", 40, 0), mig("mig-2", "wb-m2", 0, gpu.FieldUtil), mig("mig-3", "", 0, 0), mig("mig-4", "", 0, 0)}})
		sliceTicks = append(sliceTicks, unitTick{At: at, Units: []UnitUse{{Kind: models.UnitSlice, UUID: "GPU-S", GPUInstanceID: -1,
			Holder: Holder{WorkbenchID: "wb-s1"}, Sample: gpu.Sample{UUID: "GPU-S", At: at, UtilPercent: 4}, Units: 2, GPUUnits: 4}}})
	}
	var units []models.GPUUnitMinute
	units = append(units, rollupUnitMinutes("GPU-M", h100, migTicks, day0, to)...)
	units = append(units, rollupUnitMinutes("GPU-S", a100, sliceTicks, day0, to)...)

	holders := map[string]UtilHolder{
		"wb-m1": {Workbench: "mig", User: "ada", Groups: []string{"vision"}},
		"wb-s1": {Workbench: "slice", User: "ada", Groups: []string{"vision"}},
		"wb-m2": {Workbench: "sim", User: "bob"},
	}
	scheds := map[string]pricing.Schedule{
		pricing.ScheduleKey(pricing.GPU, h100): {{Effective: day0.AddDate(0, 0, -30), Micros: 4_000_000}},
		pricing.ScheduleKey(pricing.GPU, a100): {{Effective: day0.AddDate(0, 0, -30), Micros: 2_000_000}},
	}
	rep := ComputeUtilisationUnits(rows, units, day0, to, "day", holders, nil, scheds, 5)

	const hour = int64(3_600_000)
	// GPU-M: mig-1 and mig-2 are ¼ each of every minute: 0.5 h held,
	// 0.5 h nobody's. mig-2's quarter is unread (0.25 h), mig-1's is 40%
	// busy (0.1 h busy, 0.15 h idle at 4.00 = 0.60). Unheld 0.5 h at 4.00
	// = 2.00.
	// GPU-S: ada's two slices of four are half of every minute: 0.5 h
	// held at 4% (0.02 h busy, 0.48 h idle at 2.00 = 0.96; below the 5%
	// threshold: 0.5 h held low, 1.00), 0.5 h nobody's at 2.00 = 1.00.
	tot := rep.Total
	want := UtilFigures{AvailableMs: 2 * hour, AllocatedMs: hour, UnitHeldMs: hour, UnreadHeldMs: hour / 4,
		BusyMs: hour/10 + hour/50, HeldLowMs: hour / 2}
	if tot.AvailableMs != want.AvailableMs || tot.AllocatedMs != want.AllocatedMs || tot.UnitHeldMs != want.UnitHeldMs ||
		tot.UnreadHeldMs != want.UnreadHeldMs || tot.BusyMs != want.BusyMs || tot.HeldLowMs != want.HeldLowMs {
		t.Fatalf("total %+v\nwant  %+v", tot, want)
	}
	if c := tot.UnheldCostMicros(); c != 2_000_000+1_000_000 {
		t.Errorf("unheld cost %d, want 3 000 000 (only the free fractions)", c)
	}
	if c := tot.HeldIdleCostMicros(); c != 600_000+960_000 {
		t.Errorf("held idle cost %d, want 1 560 000", c)
	}
	if c := tot.HeldLowCostMicros(); c != 1_000_000 {
		t.Errorf("held-low cost %d, want 1 000 000", c)
	}
	if tot.EnergyMJ != 0 {
		t.Errorf("GPU-level energy %d: the GPUs' counters were unread, shares must not stand in for them", tot.EnergyMJ)
	}

	byGPU := map[string]UtilRow{}
	for _, r := range rep.ByGPU {
		byGPU[r.Key] = r
	}
	if g := byGPU["GPU-M"]; g.AvailableMs != hour || g.AllocatedMs != hour/2 || g.UnheldCostMicros() != 2_000_000 || g.Model != h100 {
		t.Errorf("GPU-M row %+v", g)
	}
	if len(rep.ByModel) != 2 || rep.ByModel[0].AllocatedMs != hour/2 || rep.ByModel[1].AllocatedMs != hour/2 {
		t.Errorf("by model %+v", rep.ByModel)
	}

	users := map[string]UtilRow{}
	for _, r := range rep.ByUser {
		users[r.Key] = r
	}
	// ada: mig-1's quarter (0.25 h) and her two slices' half (0.5 h);
	// her energy is mig-1's share, a quarter of 4 000 mJ per sample.
	if a := users["ada"]; a.AllocatedMs != hour*3/4 || a.BusyMs != hour/10+hour/50 || a.UnitHeldMs != hour*3/4 || a.EnergyMJ != 1000*n {
		t.Errorf("ada %+v", a)
	}
	if b := users["bob"]; b.AllocatedMs != hour/4 || b.UnreadHeldMs != hour/4 || b.BusyMs != 0 {
		t.Errorf("bob %+v", b)
	}
	groups := map[string]int64{}
	for _, g := range rep.ByGroup {
		groups[g.Key] = g.AllocatedMs
	}
	if groups["vision"] != hour*3/4 || groups[""] != hour/4 {
		t.Errorf("by group %v", groups)
	}
	// Top idle: ada's slice 0.48 h, her MIG instance 0.15 h; bob's
	// unread instance is not idle.
	if len(rep.TopIdle) != 2 || rep.TopIdle[0].Key != "ada/slice" || rep.TopIdle[0].IdleHeldMs() != hour*48/100 ||
		rep.TopIdle[1].Key != "ada/mig" || rep.TopIdle[1].IdleHeldMs() != hour*15/100 {
		t.Errorf("top idle %+v", rep.TopIdle)
	}
	// The per-unit rows stay in unit-hours: mig-1 held a whole hour.
	for _, u := range rep.ByUnit {
		if u.UnitUUID == "mig-1" && u.AllocatedMs != hour {
			t.Errorf("mig-1 unit row %+v, want 1 unit-hour held", u)
		}
	}

	// A user's own report (/usage) has their unit rows, not the GPUs':
	// ada held 0.75 GPU-hours, energy her share.
	var adas []models.GPUUnitMinute
	for _, u := range units {
		if u.WorkbenchID == "wb-m1" || u.WorkbenchID == "wb-s1" {
			adas = append(adas, u)
		}
	}
	own := ComputeUtilisationUnits(nil, adas, day0, to, "day", holders, nil, scheds, 5).Total
	if own.AllocatedMs != hour*3/4 || own.AvailableMs != hour*3/4 || own.BusyMs != hour/10+hour/50 || own.EnergyMJ != 1000*n || own.UnheldCostMicros() != 0 {
		t.Errorf("ada's own report %+v", own)
	}
}
