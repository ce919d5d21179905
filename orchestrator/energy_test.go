package orchestrator

import (
	"context"
	"testing"
	"time"

	"workbench/models"
	"workbench/orchestrator/gpu"
)

// Energy integration: counter deltas, across a driver reload (the counter
// restarts from 0), and nothing — not 0 J, not a guess from power — where
// a counter reading is missing.
func TestEnergyIntegrationAcrossCounterReset(t *testing.T) {
	t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	smp := func(sec int, mJ uint64, mW uint32, unread gpu.Field) gpu.Sample {
		return gpu.Sample{At: t0.Add(time.Duration(sec) * time.Second), EnergyMilliJ: mJ, PowerMilliW: mW, Unread: unread}
	}
	hist := []gpu.Sample{
		smp(-15, 5_000_000, 100_000, 0), // before the window: the first delta's base
		smp(0, 6_500_000, 100_000, 0),   // +1.5 kJ
		smp(15, 8_000_000, 100_000, 0),  // +1.5 kJ
		// Driver reload at ~20 s: the counter restarts. 10 s × 100 W were
		// counted since (1 kJ) but the gap is 15 s at 100 W (1.5 kJ).
		smp(30, 1_000_000, 100_000, 0),
		smp(45, 3_000_000, 100_000, 0), // +2 kJ
		// Minute 1: counter unread (power read): no energy.
		smp(60, 0, 300_000, gpu.FieldEnergy),
		// Counter back, but the previous sample's was unread: none again.
		smp(75, 9_000_000, 300_000, 0),
		// Nothing readable: no energy made up.
		smp(90, 0, 0, gpu.FieldEnergy|gpu.FieldPower),
		smp(105, 9_900_000, 300_000, 0),  // previous unread entirely: nothing
		smp(110, 11_400_000, 300_000, 0), // +1.5 kJ
	}
	rows := rollupMinutes("GPU-1", "NVIDIA H100", func(time.Time) string { return "wb1" }, hist, t0, t0.Add(2*time.Minute))
	if len(rows) != 2 {
		t.Fatalf("rows %+v, want minutes 0 and 1", rows)
	}
	if want := int64(1_500_000 + 1_500_000 + 1_500_000 + 2_000_000); rows[0].EnergyMJ != want {
		t.Errorf("minute 0 energy %d mJ, want %d (deltas, and the reset gap at mean power)", rows[0].EnergyMJ, want)
	}
	if rows[0].EnergySamples != 4 {
		t.Errorf("minute 0 measured gaps %d, want 4", rows[0].EnergySamples)
	}
	if want := int64(1_500_000); rows[1].EnergyMJ != want || rows[1].EnergySamples != 1 {
		t.Errorf("minute 1 energy %d mJ over %d gaps, want %d over 1 (only the gap with both counters read)",
			rows[1].EnergyMJ, rows[1].EnergySamples, want)
	}
	// A minute whose counter could not be read at all has no energy: not
	// measured (EnergySamples 0), which the API shows as not available.
	unread := rollupMinutes("GPU-1", "NVIDIA H100", func(time.Time) string { return "wb1" }, []gpu.Sample{
		smp(120, 0, 300_000, gpu.FieldEnergy), smp(135, 0, 300_000, gpu.FieldEnergy), smp(150, 0, 300_000, gpu.FieldEnergy),
	}, t0, t0.Add(3*time.Minute))
	if len(unread) != 1 || unread[0].EnergyMJ != 0 || unread[0].EnergySamples != 0 {
		t.Errorf("unreadable counter: %+v, want a minute with no measured energy", unread)
	}
	if _, ok := energyBetween(smp(0, 1000, 300_000, 0), smp(15, 0, 300_000, gpu.FieldEnergy)); ok {
		t.Error("an unread counter gave an energy figure")
	}
	if rows[0].GPUModel != "NVIDIA H100" || rows[0].WorkbenchID != "wb1" {
		t.Errorf("row labels %+v", rows[0])
	}

	// Without power, the counter since the reset is all that is known.
	if mJ, ok := energyBetween(smp(0, 8_000_000, 0, gpu.FieldPower), smp(15, 700, 0, gpu.FieldPower)); !ok || mJ != 700 {
		t.Errorf("reset without power: %d %v, want 700 (the counter since the restart)", mJ, ok)
	}
	// A counter that jumped back by a wrap of the uint64 counts as a reset too.
	if mJ, ok := energyBetween(smp(0, ^uint64(0)-10, 0, gpu.FieldPower), smp(1, 5, 0, gpu.FieldPower)); !ok || mJ != 5 {
		t.Errorf("wrap: %d %v", mJ, ok)
	}
}

// End to end on go-nvml mocks: a workbench holding GPU 0 (allocated by the
// store, as a launch does) draws energy that the mock's counter reports,
// the counter resets (driver reload) mid-run, and the manager's rollup
// books the integrated energy to the workbench's usage interval; a free
// GPU's energy is booked to nobody.
func TestRollupBooksEnergyToTheHoldersInterval(t *testing.T) {
	r := newGPUIdleRig(t)
	ctx := context.Background()
	devs, err := r.m.pool.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	alice, err := r.store.UserByUsername(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	holder := &models.Workbench{Name: "holder", OwnerID: alice.ID, ImageID: r.wb.ImageID, FlavorID: r.flavor.ID}
	if err := r.store.CreateWorkbench(ctx, holder, models.GPUNeed{Model: devs[0].Model, Count: 1, Candidates: []string{devs[0].UUID}}, nil); err != nil {
		t.Fatal(err)
	}
	if len(holder.GPUs) != 1 || holder.GPUs[0] != devs[0].UUID {
		t.Fatalf("allocated %v, want GPU 0", holder.GPUs)
	}
	iv := &models.UsageInterval{WorkbenchID: holder.ID, UserID: alice.ID, GPUModel: devs[0].Model, GPUCount: 1, StartedAt: r.start}
	if err := r.store.OpenInterval(ctx, iv); err != nil {
		t.Fatal(err)
	}
	at := func(sec int, e0, e1 uint64) {
		r.load.Set(0, gpu.MockGPULoad{UtilPercent: 90, PowerMilliW: 600_000, EnergyMilliJ: e0})
		r.load.Set(1, gpu.MockGPULoad{UtilPercent: 0, PowerMilliW: 60_000, EnergyMilliJ: e1})
		r.at(t, time.Duration(sec)*time.Second)
	}
	// The rig's history holds 4 samples.
	at(0, 50_000_000, 7_000_000)
	at(15, 59_000_000, 7_900_000) // +9 kJ at 600 W
	at(30, 4_000_000, 8_800_000)  // reset on GPU 0: 4 kJ counted since; the gap at 600 W is 9 kJ
	at(45, 13_000_000, 9_700_000) // +9 kJ
	r.now = r.start.Add(2 * time.Minute)
	r.m.RollupGPUMinutes(ctx)
	got, err := r.store.IntervalEnergyMJ(ctx, iv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got != 27_000_000 {
		t.Errorf("interval energy %d mJ, want 27 000 000 (3 × 9 kJ across the reset)", got)
	}
	rows, _ := r.store.GPUMinutes(ctx, r.start, r.start.Add(time.Hour))
	for _, row := range rows {
		if row.GPUUUID == devs[1].UUID && (row.WorkbenchID != "" || row.EnergyMJ == 0) {
			t.Errorf("free GPU 1's minute %+v: its energy is measured but held by nobody", row)
		}
	}
	// A second rollup over the same history books nothing twice.
	r.now = r.start.Add(3 * time.Minute)
	r.m.RollupGPUMinutes(ctx)
	if again, _ := r.store.IntervalEnergyMJ(ctx, iv.ID); again != got {
		t.Errorf("after another rollup %d mJ, was %d", again, got)
	}
}
