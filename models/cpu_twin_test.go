package models

import (
	"context"
	"errors"
	"testing"
)

// A flavor's CPU-only twin must be another existing flavor without GPUs,
// and only a GPU flavor has one; a good twin is stored and read back.
func TestCPUTwinRules(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	gpu := &Flavor{Name: "1 GPU", GPUModel: "H100", GPUCount: 1, CPUMilli: 8000, MemoryMiB: 65536, Enabled: true}
	gpu2 := &Flavor{Name: "2 GPU", GPUModel: "H100", GPUCount: 2, CPUMilli: 8000, MemoryMiB: 65536, Enabled: true}
	cpu := &Flavor{Name: "CPU twin", CPUMilli: 2000, MemoryMiB: 4096, Enabled: true}
	for _, f := range []*Flavor{gpu, gpu2, cpu} {
		if err := s.CreateFlavor(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	for name, tc := range map[string]struct {
		f    Flavor
		twin int64
	}{
		"twin with GPUs":  {*gpu, gpu2.ID},
		"itself":          {*gpu, gpu.ID},
		"missing":         {*gpu, 9999},
		"CPU flavor twin": {*cpu, cpu.ID + 100},
	} {
		f := tc.f
		f.CPUTwinID = tc.twin
		var ve *ValidationError
		if err := s.UpdateFlavor(ctx, &f); !errors.As(err, &ve) || ve.Field != "cpu_twin_id" {
			t.Errorf("%s: %v, want a cpu_twin_id error", name, err)
		}
	}
	gpu.CPUTwinID = cpu.ID
	if err := s.UpdateFlavor(ctx, gpu); err != nil {
		t.Fatal(err)
	}
	back, err := s.FlavorByID(ctx, gpu.ID)
	if err != nil || back.CPUTwinID != cpu.ID {
		t.Fatalf("twin read back: %v %d, want %d", err, back.CPUTwinID, cpu.ID)
	}
}

// The shape of a run: the workbench's own flavor unless the run recorded
// its twin.
func TestWorkbenchShapeFlavor(t *testing.T) {
	w := Workbench{FlavorID: 3}
	if w.CPUOnly() || w.ShapeFlavorID() != 3 {
		t.Fatalf("own flavor: cpu-only %v shape %d", w.CPUOnly(), w.ShapeFlavorID())
	}
	w.RunFlavorID = 7
	if !w.CPUOnly() || w.ShapeFlavorID() != 7 {
		t.Fatalf("twin: cpu-only %v shape %d", w.CPUOnly(), w.ShapeFlavorID())
	}
}
