package handlers

import (
	"context"
	"testing"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/templates/i18n"
)

// A GPU shared in one slice before that was refused is worded "1 of 1
// slice", not "1 of 1 slices"; in Chinese as before.
func TestGPUSharedInOneSliceLabel(t *testing.T) {
	k0 := 0
	g := orchestrator.PoolGPU{Model: "H100", State: orchestrator.GPUShared, SharedSlices: 1, Units: []orchestrator.PoolUnit{
		{Kind: models.UnitSlice, UUID: "GPU-s", Slice: &k0},
	}}
	if got := gpuRow(context.Background(), g).StateLabel; got != "Shared: 1 of 1 slice free" {
		t.Errorf("label %q", got)
	}
	if got := gpuRow(i18n.WithLocale(context.Background(), i18n.Chinese), g).StateLabel; got != "共享：1 个切片中 1 个空闲" {
		t.Errorf("Chinese label %q", got)
	}
	g.SharedSlices = 4
	g.Units = nil
	if got := gpuRow(context.Background(), g).StateLabel; got != "Shared: 0 of 4 slices free" {
		t.Errorf("label %q", got)
	}
}
