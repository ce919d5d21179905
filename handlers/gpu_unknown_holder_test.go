package handlers

import (
	"context"
	"strings"
	"testing"
	"time"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/templates/i18n"
)

// A slice held by a container the portal does not know (a restored
// backup's orphan) is not free on the pool page: its row names the
// container and when the sweep removes it, and the GPU's count and the
// launch form's offer leave it out. Read as free before, it was offered.
func TestPoolUnitHeldByAnUnknownContainer(t *testing.T) {
	k0, k1 := 0, 1
	orphan := &orchestrator.UnknownHolder{Name: "wb-abc-later", RemoveAt: time.Date(2026, 3, 4, 14, 20, 0, 0, time.UTC)}
	g := orchestrator.PoolGPU{Model: "H100", State: orchestrator.GPUShared, SharedSlices: 2, Units: []orchestrator.PoolUnit{
		{Kind: models.UnitSlice, UUID: "GPU-s", Slice: &k0, Unknown: orphan},
		{Kind: models.UnitSlice, UUID: "GPU-s", Slice: &k1},
	}}
	if n := g.FreeUnits(); n != 1 {
		t.Errorf("free units %d, want 1", n)
	}
	if n := partsFor([]orchestrator.PoolGPU{g}, models.Flavor{GPUModel: "H100", UnitKind: models.UnitSlice, GPUCount: 1}, true); n != 1 {
		t.Errorf("slices offered %d, want 1", n)
	}
	for _, tc := range []struct {
		lc   context.Context
		want string
	}{
		{context.Background(), "in use by a container the portal does not know: wb-abc-later (the portal removes it at 14:20 UTC)"},
		{i18n.WithLocale(context.Background(), i18n.Chinese), "被门户未知的容器占用：wb-abc-later（门户将于 14:20 UTC 移除它）"},
	} {
		rows := unitRows(tc.lc, g, map[string]string{})
		if rows[0].Free || rows[0].HeldBy != tc.want {
			t.Errorf("held slice: free %v, held by %q; want %q", rows[0].Free, rows[0].HeldBy, tc.want)
		}
		if !rows[1].Free || strings.Contains(rows[1].HeldBy, "wb-abc-later") {
			t.Errorf("free slice: %+v", rows[1])
		}
	}
}
