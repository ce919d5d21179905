package handlers

import (
	"testing"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/orchestrator/gpu"
)

// TestFreeUnitsFor: what the launch form and catalog offer per flavor kind —
// whole free GPUs, free instances of the flavor's MIG profile only, free
// slices of shared GPUs — never counting drained or unhealthy GPUs' units.
func TestFreeUnitsFor(t *testing.T) {
	const m = "H100"
	k0, k1 := 0, 1
	gpus := []orchestrator.PoolGPU{
		{Model: m, State: orchestrator.GPUFree},
		{Model: m, State: orchestrator.GPUInUse, WorkbenchID: "w"},
		{Model: m, State: orchestrator.GPUMIG, Units: []orchestrator.PoolUnit{
			{Kind: models.UnitMIG, UUID: "MIG-1", Profile: "1g.10gb"},
			{Kind: models.UnitMIG, UUID: "MIG-2", Profile: "1g.10gb", WorkbenchID: "w"},
			{Kind: models.UnitMIG, UUID: "MIG-3", Profile: "3g.40gb"},
		}},
		{Model: m, State: orchestrator.GPUShared, Units: []orchestrator.PoolUnit{
			{Kind: models.UnitSlice, UUID: "GPU-s", Slice: &k0}, {Kind: models.UnitSlice, UUID: "GPU-s", Slice: &k1},
		}},
		{Model: m, State: orchestrator.GPUDrained, Units: []orchestrator.PoolUnit{{Kind: models.UnitSlice, UUID: "GPU-d", Slice: &k0}}},
		{Model: "A100", State: orchestrator.GPUFree},
	}
	for _, tc := range []struct {
		f    models.Flavor
		want int
	}{
		{models.Flavor{GPUModel: m, GPUCount: 1, UnitKind: models.UnitGPU}, 1},
		{models.Flavor{GPUModel: m, GPUCount: 1, UnitKind: models.UnitMIG, MIGProfile: "1g.10gb"}, 1},
		{models.Flavor{GPUModel: m, GPUCount: 1, UnitKind: models.UnitMIG, MIGProfile: "3g.40gb"}, 1},
		{models.Flavor{GPUModel: m, GPUCount: 1, UnitKind: models.UnitMIG, MIGProfile: "2g.20gb"}, 0},
		{models.Flavor{GPUModel: m, GPUCount: 1, UnitKind: models.UnitSlice}, 2},
	} {
		if got := freeUnitsFor(gpus, tc.f); got != tc.want {
			t.Errorf("%s %s: %d free, want %d", tc.f.UnitKind, tc.f.MIGProfile, got, tc.want)
		}
	}
	if got := flavorUnavailable(models.Flavor{GPUModel: m, GPUCount: 2, UnitKind: models.UnitMIG, MIGProfile: "1g.10gb"}, 1); got != "needs 2 MIG instances, 1 free" {
		t.Errorf("unavailable text %q", got)
	}
	if got := unitText(models.Flavor{GPUModel: "NVIDIA H100 80GB HBM3", GPUCount: 1, UnitKind: models.UnitSlice}); got != "1 slice of a shared H100 80GB HBM3" {
		t.Errorf("unit text %q", got)
	}
}

// TestPoolUnitsForAndChoice: the launch form measures a flavor against the
// units of its own kind in the pool. A model whose GPUs are all split into
// MIG instances has no whole GPU, yet its instances queue; a flavor asking
// for more than the pool holds can never start and says so.
func TestPoolUnitsForAndChoice(t *testing.T) {
	const m = "A100"
	k0, k1 := 0, 1
	gpus := []orchestrator.PoolGPU{
		{Model: m, State: orchestrator.GPUMIG, Health: gpu.HealthOK, MIGEnabled: true, Units: []orchestrator.PoolUnit{
			{Kind: models.UnitMIG, UUID: "MIG-1", Profile: "1g.10gb", WorkbenchID: "w1"},
			{Kind: models.UnitMIG, UUID: "MIG-2", Profile: "1g.10gb", WorkbenchID: "w2"},
			{Kind: models.UnitMIG, UUID: "MIG-3", Profile: "3g.40gb"},
		}},
		{Model: m, State: orchestrator.GPUMIG, Health: gpu.HealthOK, MIGEnabled: true, Units: []orchestrator.PoolUnit{
			{Kind: models.UnitMIG, UUID: "MIG-4", Profile: "1g.10gb", WorkbenchID: "w3"},
		}},
		{Model: m, State: orchestrator.GPUDrained, Health: gpu.HealthOK, MIGEnabled: true, Drained: true, Units: []orchestrator.PoolUnit{{Kind: models.UnitMIG, UUID: "MIG-5", Profile: "1g.10gb"}}},
		{Model: "H100", State: orchestrator.GPUShared, Health: gpu.HealthOK, SharedSlices: 2, Units: []orchestrator.PoolUnit{
			{Kind: models.UnitSlice, UUID: "GPU-s", Slice: &k0, WorkbenchID: "w4"}, {Kind: models.UnitSlice, UUID: "GPU-s", Slice: &k1},
		}},
		// Whole H100s: one free, one held (both count), one drained and
		// one unhealthy (neither does). No A100 is whole.
		{Model: "H100", State: orchestrator.GPUFree, Health: gpu.HealthOK},
		{Model: "H100", State: orchestrator.GPUInUse, Health: gpu.HealthOK, WorkbenchID: "w5"},
		{Model: "H100", State: orchestrator.GPUDrained, Health: gpu.HealthOK, Drained: true},
		{Model: "H100", State: orchestrator.GPUUnhealthy, Health: "unhealthy"},
	}
	mig1 := models.Flavor{GPUModel: m, GPUCount: 2, UnitKind: models.UnitMIG, MIGProfile: "1g.10gb"}
	for _, tc := range []struct {
		f    models.Flavor
		want int
	}{
		{mig1, 3}, // held ones count, the drained GPU's does not
		{models.Flavor{GPUModel: m, GPUCount: 1, UnitKind: models.UnitMIG, MIGProfile: "3g.40gb"}, 1},
		{models.Flavor{GPUModel: m, GPUCount: 1, UnitKind: models.UnitGPU}, 0},
		{models.Flavor{GPUModel: "H100", GPUCount: 1, UnitKind: models.UnitSlice}, 2},
		{models.Flavor{GPUModel: "H100", GPUCount: 1}, 3}, // the shared GPU too, as the scheduler's candidates
	} {
		if got := poolUnitsFor(gpus, tc.f); got != tc.want {
			t.Errorf("%s %s %s: %d in the pool, want %d", tc.f.GPUModel, tc.f.UnitKind, tc.f.MIGProfile, got, tc.want)
		}
	}

	// need is what Pool.Need says of f: structural units of its kind.
	need := func(f models.Flavor, structural int) models.GPUNeed {
		return models.GPUNeed{Kind: f.UnitKind, Count: f.GPUCount, Structural: structural}
	}
	// Every 1g.10gb instance is held: two of them wait; four, on a server
	// of three, never fit.
	if never, waits := flavorChoice(mig1, freeUnitsFor(gpus, mig1), poolUnitsFor(gpus, mig1), 2, need(mig1, 4)); never != "" || waits != "needs 2 MIG instances, none free: it waits in the queue for a free GPU" {
		t.Errorf("2 held instances: never %q, waits %q", never, waits)
	}
	four := mig1
	four.GPUCount = 4
	if never, waits := flavorChoice(four, 0, 3, 3, need(four, 3)); never != "needs 4 MIG instances; this server has 3" || waits != "" {
		t.Errorf("4 of 3 instances: never %q, waits %q", never, waits)
	}
	// The drained GPU's 1g.10gb instance counts among the server's, not
	// the pool's: four instances asked, three in service, four in all.
	if got := unitsOfKindFor(gpus, four); got != 4 {
		t.Errorf("1g.10gb instances in all: %d, want 4 (the drained GPU's too)", got)
	}
	// Not ruled out: the drained GPU comes back (the launch's rule).
	if never, waits := flavorChoice(four, 0, poolUnitsFor(gpus, four), unitsOfKindFor(gpus, four), need(four, 4)); never != "" ||
		waits != "needs 4 MIG instances; only 3 are in service now, the others on a drained GPU or one out of order: it waits in the queue until they are back in service" {
		t.Errorf("4 instances, one on a drained GPU: never %q, waits %q", never, waits)
	}
	one := models.Flavor{GPUModel: "H100", GPUCount: 1}
	if never, waits := flavorChoice(one, 1, 2, 2, need(one, 2)); never != "" || waits != "" {
		t.Errorf("a free GPU: never %q, waits %q", never, waits)
	}
	// Eight H100s, one split into MIG instances: an 8-GPU flavor can never
	// start, and the reason does not say the server has 7.
	eight := models.Flavor{GPUModel: "H100", GPUCount: 8}
	if never, _ := flavorChoice(eight, 7, 7, 8, need(eight, 7)); never != "needs 8 GPUs; 7 of this server's 8 can be handed out whole (the rest are split into MIG instances)" {
		t.Errorf("8 of 7 whole GPUs: never %q", never)
	}
	// Eight H100s, one drained: the 8-GPU flavor waits for it, not ruled out.
	if never, waits := flavorChoice(eight, 7, 7, 8, need(eight, 8)); never != "" ||
		waits != "needs 8 GPUs; only 7 are in service now, the others drained or out of order: it waits in the queue until they are back in service" {
		t.Errorf("8 GPUs, one drained: never %q, waits %q", never, waits)
	}
	if never, waits := flavorChoice(models.Flavor{}, 0, 0, 0, models.GPUNeed{}); never != "" || waits != "" {
		t.Errorf("a CPU flavor: never %q, waits %q", never, waits)
	}
}
