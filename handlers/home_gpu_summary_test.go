package handlers

import (
	"context"
	"testing"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/templates/i18n"
)

// The home page's pool line counts free MIG instances and slices too: with
// every whole GPU taken it read "0 free" while shared units waited. GPUs
// split into MIG instances or shared in slices are counted with their
// units, not among the whole GPUs ("5 GPUs, 1 free" read as five whole
// GPUs); a drained shared GPU is still one shared, its slices offered to
// no one.
func TestGPUSummaryCountsFreeUnits(t *testing.T) {
	ctx := context.Background()
	whole := []orchestrator.PoolGPU{{State: orchestrator.GPUFree}, {State: orchestrator.GPUInUse, WorkbenchID: "a"}}
	if got := gpuSummary(ctx, whole, nil); got != "2 GPUs, 1 free." {
		t.Errorf("whole GPUs only: %q", got)
	}
	split := append(whole,
		orchestrator.PoolGPU{State: orchestrator.GPUMIG, Units: []orchestrator.PoolUnit{{Kind: models.UnitMIG}, {Kind: models.UnitMIG, WorkbenchID: "b"}}},
		orchestrator.PoolGPU{State: orchestrator.GPUShared, Units: []orchestrator.PoolUnit{{Kind: models.UnitSlice}, {Kind: models.UnitSlice}, {Kind: models.UnitSlice, WorkbenchID: "c"}}},
		// A drained shared GPU offers nothing.
		orchestrator.PoolGPU{State: orchestrator.GPUDrained, SharedSlices: 2, Units: []orchestrator.PoolUnit{{Kind: models.UnitSlice}, {Kind: models.UnitSlice}}},
	)
	if got, want := gpuSummary(ctx, split, nil), "2 whole GPUs, 1 free. 1 GPU split into 2 MIG instances: 1 free. 2 GPUs shared in 5 slices: 2 free."; got != want {
		t.Errorf("with MIG and shared GPUs: %q, want %q", got, want)
	}
	// Only the kinds the pool has: no "0 slices" without a shared GPU.
	migOnly := append(whole[:2:2], orchestrator.PoolGPU{State: orchestrator.GPUMIG, Units: []orchestrator.PoolUnit{{Kind: models.UnitMIG}}})
	if got, want := gpuSummary(ctx, migOnly, nil), "2 whole GPUs, 1 free. 1 GPU split into 1 MIG instance: 1 free."; got != want {
		t.Errorf("with MIG only: %q, want %q", got, want)
	}
	// In Chinese, Chinese punctuation throughout.
	if got, want := gpuSummary(i18n.WithLocale(ctx, i18n.Chinese), split, nil), "整卡 GPU 共 2 块，1 块空闲。1 块 GPU 划分为 2 个 MIG 实例：1 个空闲。2 块 GPU 共享为 5 个切片：2 个空闲。"; got != want {
		t.Errorf("in Chinese: %q, want %q", got, want)
	}
	// Units others' bookings hold back are counted apart, kind by kind,
	// and only free ones (a booking of 3 with 1 free holds back 1).
	held := map[models.UnitPool]int{{Kind: models.UnitGPU}: 3, {Kind: models.UnitSlice}: 1}
	if got, want := gpuSummary(ctx, split, held), "2 whole GPUs, 0 free · 1 reserved for others now. 1 GPU split into 2 MIG instances: 1 free. 2 GPUs shared in 5 slices: 1 free · 1 reserved for others now."; got != want {
		t.Errorf("with bookings: %q, want %q", got, want)
	}
	if got, want := gpuSummary(i18n.WithLocale(ctx, i18n.Chinese), split, held), "整卡 GPU 共 2 块，0 块空闲 · 另有 1 块此刻为他人预留。1 块 GPU 划分为 2 个 MIG 实例：1 个空闲。2 块 GPU 共享为 5 个切片：1 个空闲 · 另有 1 个此刻为他人预留。"; got != want {
		t.Errorf("with bookings, in Chinese: %q, want %q", got, want)
	}
	// Every GPU split: no "0 whole GPUs".
	allMIG := []orchestrator.PoolGPU{{State: orchestrator.GPUMIG, MIGEnabled: true, Units: []orchestrator.PoolUnit{{Kind: models.UnitMIG}, {Kind: models.UnitMIG}}}}
	if got, want := gpuSummary(ctx, allMIG, nil), "1 GPU split into 2 MIG instances: 2 free."; got != want {
		t.Errorf("every GPU in MIG instances: %q, want %q", got, want)
	}
}
