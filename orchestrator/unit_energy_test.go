package orchestrator

import (
	"context"
	"testing"
	"time"

	"workbench/models"
	"workbench/orchestrator/gpu"
)

// openInterval opens wb's usage interval at the rig's start, as metering does.
func (r *unitTelRig) openInterval(t *testing.T, wb *models.Workbench, model string) *models.UsageInterval {
	t.Helper()
	iv := &models.UsageInterval{WorkbenchID: wb.ID, UserID: wb.OwnerID, GPUModel: model, GPUCount: 1, StartedAt: r.start}
	if err := r.store.OpenInterval(context.Background(), iv); err != nil {
		t.Fatal(err)
	}
	return iv
}

// TestUnitEnergySharesAndRollup: on go-nvml mocks with an injected clock,
// slice holders get their processes' share of the shared GPU's measured
// energy (across a counter reset), MIG holders the instance's share by
// compute slices and, once the driver answers per-instance utilisation,
// by slices × utilisation; a GPU whose counter cannot be read gives no
// energy at all (not 0 J); each unit's minutes are rolled up with its own
// figures, and the workbench's series and energy read them back.
func TestUnitEnergySharesAndRollup(t *testing.T) {
	r := newUnitTelRig(t)
	ctx := context.Background()
	alice := r.holder(t, "alice", "vision", r.sliceNeed(), 4201)
	bob := r.holder(t, "bob", "audio", r.sliceNeed(), 4202)
	carol := r.holder(t, "carol", "text", r.migNeed(0), 4301)
	dave := r.holder(t, "dave", "maths", models.GPUNeed{Model: r.devs[0].Model, Count: 1, Candidates: []string{r.devs[0].UUID}}, 4401)
	ivs := map[string]*models.UsageInterval{}
	for _, wb := range []*models.Workbench{alice, bob, carol, dave} {
		ivs[wb.ID] = r.openInterval(t, wb, r.devs[0].Model)
	}
	procs := []gpu.Process{
		{PID: 4201, UsedMemMiB: 30000, SMUtilPercent: 60},
		{PID: 4202, UsedMemMiB: 2000, SMUtilPercent: 20},
		{PID: 9999, UsedMemMiB: 10, SMUtilPercent: 20}, // in no container of ours: its share is nobody's
	}
	// Minute 0: 4 samples. GPU 2 (shared) draws 9 kJ a gap; its counter
	// restarts at 30 s (4 kJ counted since; 600 W over 15 s is 9 kJ).
	// GPU 5 (MIG) draws 6 kJ a gap, no per-instance utilisation.
	// GPU 0 (dave's, whole) has no readable energy counter at all.
	e2 := []uint64{100_000_000, 109_000_000, 4_000_000, 13_000_000}
	for k, sec := range []int{0, 15, 30, 45} {
		r.load.Set(2, gpu.MockGPULoad{UtilPercent: 80, PowerMilliW: 600_000, EnergyMilliJ: e2[k], Processes: procs})
		r.load.Set(5, gpu.MockGPULoad{PowerMilliW: 400_000, EnergyMilliJ: 50_000_000 + uint64(k)*6_000_000})
		r.load.Set(0, gpu.MockGPULoad{UtilPercent: 3, PowerMilliW: 90_000, EnergyUnread: true})
		r.at(t, time.Duration(sec)*time.Second)
	}
	r.now = r.start.Add(time.Minute)
	r.m.RollupGPUMinutes(ctx)

	// Minute 1: GPU 2's counter cannot be read; the MIG driver answers
	// per-instance utilisation (30% and 10%): carol's share is 3/4.
	r.mig.SetUtil(r.devs[5].MIG[0].UUID, 30, 5)
	r.mig.SetUtil(r.devs[5].MIG[1].UUID, 10, 5)
	r.mig.SetMemUsed(r.devs[5].MIG[0].UUID, 4096)
	for k, sec := range []int{60, 75, 90, 105} {
		r.load.Set(2, gpu.MockGPULoad{UtilPercent: 80, PowerMilliW: 600_000, EnergyUnread: true, Processes: procs})
		r.load.Set(5, gpu.MockGPULoad{PowerMilliW: 400_000, EnergyMilliJ: 50_000_000 + uint64(4+k)*6_000_000})
		r.load.Set(0, gpu.MockGPULoad{UtilPercent: 3, PowerMilliW: 90_000, EnergyUnread: true})
		r.at(t, time.Duration(sec)*time.Second)
	}

	// Before the minute is rolled up, the workbench's series folds it
	// from memory.
	r.now = r.start.Add(110 * time.Second)
	tel, err := r.m.WorkbenchTelemetry(ctx, carol)
	if err != nil {
		t.Fatal(err)
	}
	checkCarol := func(when string, tel WBTelemetry) {
		t.Helper()
		if len(tel.Units) != 1 || tel.Units[0].Kind != models.UnitMIG || tel.Units[0].UUID != r.devs[5].MIG[0].UUID {
			t.Fatalf("%s: carol's units %+v", when, tel.Units)
		}
		u := tel.Units[0]
		if !u.HasLatest || !u.Latest.Readable(gpu.FieldUtil) || u.Latest.UtilPercent != 30 || u.Latest.MemUsedMiB != 4096 {
			t.Errorf("%s: latest %+v, want the instance's own 30%% and 4096 MiB", when, u.Latest)
		}
		if u.ShareBasis != ShareMIGUtil || u.GPUInstanceID != r.devs[5].MIG[0].GPUInstanceID {
			t.Errorf("%s: basis %q GI %d", when, u.ShareBasis, u.GPUInstanceID)
		}
		if len(u.Series) != 2 {
			t.Fatalf("%s: series %+v, want minutes 12:00 and 12:01 (started 12:00)", when, u.Series)
		}
		m0, m1 := u.Series[0], u.Series[1]
		if m0.UtilPercent != nil {
			t.Errorf("%s: minute 0 utilisation %v, want not available (the driver did not answer it)", when, *m0.UtilPercent)
		}
		if m0.EnergyMJ == nil || *m0.EnergyMJ != 9_000_000 {
			t.Errorf("%s: minute 0 energy %v, want 3 gaps × 6 kJ × 1/2 (slices)", when, m0.EnergyMJ)
		}
		if m1.UtilPercent == nil || *m1.UtilPercent != 30 || m1.MemUsedMiB == nil || *m1.MemUsedMiB != 4096 {
			t.Errorf("%s: minute 1 %+v", when, m1)
		}
		if m1.EnergyMJ == nil || *m1.EnergyMJ != 18_000_000 {
			t.Errorf("%s: minute 1 energy %v, want 4 gaps × 6 kJ × 3/4 (slices × utilisation)", when, m1.EnergyMJ)
		}
	}
	checkCarol("from memory", tel)

	r.now = r.start.Add(2 * time.Minute)
	r.m.RollupGPUMinutes(ctx)
	if tel, err = r.m.WorkbenchTelemetry(ctx, carol); err != nil {
		t.Fatal(err)
	}
	tel.Units[0].Series = tel.Units[0].Series[:2] // 12:02, the current minute, has no sample yet
	checkCarol("rolled up", tel)

	energy := func(wb *models.Workbench) models.EnergyTotals {
		t.Helper()
		e, err := r.store.IntervalEnergy(ctx, ivs[wb.ID].ID)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	for _, c := range []struct {
		wb   *models.Workbench
		name string
		want int64
	}{
		// 3 gaps × 9 kJ (the reset gap at mean power) × 60/100 and 20/100.
		{alice, "alice", 16_200_000}, {bob, "bob", 5_400_000},
		{carol, "carol", 27_000_000},
	} {
		e := energy(c.wb)
		if !e.Measured || e.MJ != c.want || e.ShareMJ != c.want {
			t.Errorf("%s's interval energy %+v, want %d mJ, all of it a share", c.name, e, c.want)
		}
	}
	if e := energy(dave); e.Measured || e.MJ != 0 {
		t.Errorf("dave's GPU has no readable energy counter, yet his energy is %+v (want not measured)", e)
	}
	if tel, err := r.m.WorkbenchTelemetry(ctx, dave); err != nil || tel.RunEnergy.Measured || tel.Energy.Measured {
		t.Errorf("dave's telemetry energy %+v %+v (%v), want not measured", tel.RunEnergy, tel.Energy, err)
	} else if s := tel.Units[0].Series[0]; s.EnergyMJ != nil || s.UtilPercent == nil || *s.UtilPercent != 3 {
		t.Errorf("dave's minute 0: %+v, want 3%% and no energy", s)
	}

	// /metrics: a per-workbench energy counter by basis, with the holder's
	// labels; none for a workbench with nothing measured.
	all := scrapeExposition(t, r.m)
	for _, c := range []struct {
		wb          *models.Workbench
		user, share string
	}{{alice, "alice", "1.62e+07"}, {carol, "carol", "2.7e+07"}} {
		sh := series(all, wbEnergyName, map[string]string{"workbench": c.wb.ID, "basis": "share"})
		me := series(all, wbEnergyName, map[string]string{"workbench": c.wb.ID, "basis": "measured"})
		if len(sh) != 1 || sh[0]["__value"] != c.share || sh[0]["user"] != c.user || len(me) != 1 || me[0]["__value"] != "0" {
			t.Errorf("%s energy series: share %v, measured %v", c.user, sh, me)
		}
	}
	if got := series(all, wbEnergyName, map[string]string{"workbench": dave.ID}); len(got) != 0 {
		t.Errorf("dave's unmeasured energy exported: %v", got)
	}

	rows, err := r.store.GPUUnitMinutes(ctx, r.start, r.start.Add(time.Hour), nil)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, row := range rows {
		switch {
		case row.WorkbenchID == alice.ID && row.Minute == r.start.Unix():
			found++
			if row.Kind != models.UnitSlice || row.Samples != 4 || row.UtilSum != 240 || row.MemUsedMaxMiB != 30000 ||
				row.EnergySamples != 3 || row.EnergyBasis != ShareProcessUtil {
				t.Errorf("alice's minute 0: %+v", row)
			}
		case row.WorkbenchID == alice.ID:
			found++
			if row.EnergySamples != 0 || row.EnergyMJ != 0 || row.UtilSamples != 4 {
				t.Errorf("alice's minute 1 (counter unread): %+v, want utilisation but no energy", row)
			}
		case row.UnitUUID == r.devs[5].MIG[1].UUID && row.Minute == r.start.Unix():
			found++
			if row.WorkbenchID != "" || row.EnergyMJ != 9_000_000 || row.UnreadSamples != 4 {
				t.Errorf("free MIG instance's minute 0: %+v", row)
			}
		}
	}
	if found != 3 {
		t.Errorf("unit rows %+v", rows)
	}
}

// BenchmarkCollectWithUnits measures one sampler collection of the 8
// mock GPUs plus the per-unit attribution that follows it (cgroup reads,
// the store's bound units, workbenches and owners, energy shares): two
// slice holders with processes and a MIG GPU with two instances, one held.
func BenchmarkCollectWithUnits(b *testing.B) {
	r := newUnitTelRig(b)
	r.holder(b, "alice", "vision", r.sliceNeed(), 4201)
	r.holder(b, "bob", "audio", r.sliceNeed(), 4202)
	r.holder(b, "carol", "text", r.migNeed(0), 4301)
	r.load.Set(2, gpu.MockGPULoad{UtilPercent: 80, PowerMilliW: 600_000, EnergyMilliJ: 1, Processes: []gpu.Process{
		{PID: 4201, UsedMemMiB: 30000, SMUtilPercent: 60}, {PID: 4202, UsedMemMiB: 2000, SMUtilPercent: 20}}})
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.now = r.start.Add(time.Duration(i) * time.Second)
		if err := r.sampler.Collect(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// The share rules on their own: compute slices of MIG profiles, and slice
// holders split equally (by the slices they hold, of the GPU's) where no
// process used the SMs or per-process utilisation was not read.
func TestEnergyShareRules(t *testing.T) {
	for profile, want := range map[string]int64{"1g.10gb": 1, "3g.40gb": 3, "7g.80gb": 7, "1c.3g.40gb": 1, "2c.4g.40gb": 2, "1g.20gb+me": 1, "profile-3/1": 1} {
		if got := migSlices(profile); got != want {
			t.Errorf("migSlices(%q) = %d, want %d", profile, got, want)
		}
	}
	g := PoolGPU{UUID: "GPU-s", SharedSlices: 4, Units: []PoolUnit{
		{Kind: models.UnitSlice, WorkbenchID: "a"}, {Kind: models.UnitSlice, WorkbenchID: "a"},
		{Kind: models.UnitSlice, WorkbenchID: "b"}, {Kind: models.UnitSlice},
	}}
	units := func() []UnitUse {
		return []UnitUse{{Kind: models.UnitSlice, Holder: Holder{WorkbenchID: "a"}}, {Kind: models.UnitSlice, Holder: Holder{WorkbenchID: "b"}}}
	}
	procs := []ProcessUse{{PID: 1, SMUtilPercent: 0, Holder: Holder{WorkbenchID: "a"}}, {PID: 2, SMUtilPercent: 0, Holder: Holder{WorkbenchID: "b"}}}
	for name, u := range map[string]GPUUse{
		"no process used the SMs":      {HasSample: true, Processes: procs},
		"per-process util unread":      {HasSample: true, Sample: gpu.Sample{Unread: gpu.FieldProcessUtil}, Processes: procs},
		"process list unread":          {HasSample: true, Sample: gpu.Sample{Unread: gpu.FieldProcesses | gpu.FieldProcessUtil}},
		"no sample (energy elsewhere)": {},
	} {
		us := units()
		sliceShares(us, g, u)
		if us[0].ShareBasis != ShareEqualSlices || us[0].ShareNum != 2 || us[0].ShareDen != 4 || us[1].ShareNum != 1 || us[1].ShareDen != 4 {
			t.Errorf("%s: shares %+v, want a 2/4 and b 1/4 (equal by slice; the free slice's quarter is nobody's)", name, us)
		}
	}
	us := units()
	sliceShares(us, g, GPUUse{HasSample: true, Processes: []ProcessUse{
		{SMUtilPercent: 30, Holder: Holder{WorkbenchID: "a"}}, {SMUtilPercent: 10, Holder: Holder{WorkbenchID: "b"}}, {SMUtilPercent: 10}}})
	if us[0].ShareBasis != ShareProcessUtil || us[0].ShareNum != 30 || us[0].ShareDen != 50 || us[1].ShareNum != 10 {
		t.Errorf("by process utilisation: %+v, want a 30/50, b 10/50", us)
	}
	mig := []UnitUse{
		{Kind: models.UnitMIG, Profile: "3g.40gb", Sample: gpu.Sample{UtilPercent: 10}},
		{Kind: models.UnitMIG, Profile: "1g.10gb", Sample: gpu.Sample{UtilPercent: 70}},
	}
	migShares(mig)
	if mig[0].ShareBasis != ShareMIGUtil || mig[0].ShareNum != 30 || mig[0].ShareDen != 100 || mig[1].ShareNum != 70 {
		t.Errorf("MIG by slices × utilisation: %+v, want 30/100 and 70/100", mig)
	}
	mig[1].Sample.Unread = gpu.FieldUtil
	migShares(mig)
	if mig[0].ShareBasis != ShareMIGSlices || mig[0].ShareNum != 3 || mig[0].ShareDen != 4 || mig[1].ShareNum != 1 {
		t.Errorf("MIG by slices (one instance unread): %+v, want 3/4 and 1/4", mig)
	}
}
