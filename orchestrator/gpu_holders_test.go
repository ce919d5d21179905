package orchestrator

import (
	"context"
	"testing"
	"time"

	"workbench/models"
)

// TestRollupStampsEachMinuteWithItsHolder: a GPU free in minute 0, held
// by "late" from 70 s to 130 s, free again after: the rollup run after
// each minute stamps minute 0 and minute 2 with no holder and minute 1
// with late. (It stamped each past minute with whoever held the GPU when
// the rollup ran, so the minute before a launch and the last one of a run
// went to the wrong workbench and owner.)
func TestRollupStampsEachMinuteWithItsHolder(t *testing.T) {
	r := newGPUIdleRig(t)
	r.m.WatchUnitIdle()
	ctx := context.Background()
	devs, err := r.m.pool.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	uuid := devs[2].UUID
	r.at(t, 10*time.Second)
	r.at(t, 40*time.Second)
	late := &models.Workbench{Name: "late", OwnerID: r.wb.OwnerID, ImageID: r.wb.ImageID, FlavorID: r.wb.FlavorID}
	need := models.GPUNeed{Kind: models.UnitGPU, Model: devs[2].Model, Count: 1, Candidates: []string{uuid}}
	r.now = r.start.Add(70 * time.Second)
	if err := r.store.CreateWorkbench(ctx, late, need, nil); err != nil {
		t.Fatal(err)
	}
	r.at(t, 80*time.Second)
	r.at(t, 110*time.Second)
	r.now = r.start.Add(125 * time.Second)
	r.m.RollupGPUMinutes(ctx) // minutes 0 and 1, while late still holds the GPU
	r.now = r.start.Add(130 * time.Second)
	if err := r.store.ReleaseGPUs(ctx, late.ID); err != nil {
		t.Fatal(err)
	}
	r.at(t, 140*time.Second)
	r.at(t, 170*time.Second)
	r.now = r.start.Add(190 * time.Second)
	r.m.RollupGPUMinutes(ctx) // minute 2, after the release
	rows, err := r.store.GPUMinutes(ctx, r.start, r.start.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]string{}
	for _, row := range rows {
		if row.GPUUUID == uuid {
			got[(row.Minute-r.start.Unix())/60] = row.WorkbenchID
		}
	}
	want := map[int64]string{0: "", 1: late.ID, 2: ""}
	for m, w := range want {
		if h, ok := got[m]; !ok || h != w {
			t.Errorf("minute %d: holder %q (row %v), want %q", m, h, ok, w)
		}
	}
}
