package orchestrator

import (
	"testing"
	"time"

	"workbench/orchestrator/gpu"
)

// Energy integration: counter deltas, across a driver reload (the counter
// restarts from 0), across an unread counter (mean power fills in), and
// nothing where neither could be read.
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
		// Minute 1: counter unread; mean power (100 W, 300 W) over 15 s.
		smp(60, 0, 300_000, gpu.FieldEnergy),
		// Counter back, but the previous sample's was unread: power again.
		smp(75, 9_000_000, 300_000, 0),
		// Nothing readable: no energy made up.
		smp(90, 0, 0, gpu.FieldEnergy|gpu.FieldPower),
		smp(105, 9_900_000, 300_000, 0),  // previous unread entirely: nothing
		smp(110, 11_400_000, 300_000, 0), // +1.5 kJ
	}
	rows := rollupMinutes("GPU-1", "NVIDIA H100", "wb1", hist, t0, t0.Add(2*time.Minute))
	if len(rows) != 2 {
		t.Fatalf("rows %+v, want minutes 0 and 1", rows)
	}
	if want := int64(1_500_000 + 1_500_000 + 1_500_000 + 2_000_000); rows[0].EnergyMJ != want {
		t.Errorf("minute 0 energy %d mJ, want %d (deltas, and the reset gap at mean power)", rows[0].EnergyMJ, want)
	}
	if want := int64(3_000_000 + 4_500_000 + 1_500_000); rows[1].EnergyMJ != want {
		t.Errorf("minute 1 energy %d mJ, want %d (power estimates, nothing for the unread gap)", rows[1].EnergyMJ, want)
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
