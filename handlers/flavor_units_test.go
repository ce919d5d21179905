package handlers

import (
	"testing"

	"workbench/models"
	"workbench/orchestrator"
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
