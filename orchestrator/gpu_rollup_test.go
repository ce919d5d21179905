package orchestrator

import (
	"context"
	"testing"
	"time"

	"workbench/orchestrator/gpu"
)

// Per-minute rollups: complete minutes only, unread samples counted apart
// (never as 0%), a minute written once, old minutes pruned.
func TestRollupGPUMinutes(t *testing.T) {
	r := newGPUIdleRig(t)
	ctx := context.Background()
	devs, err := r.m.pool.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	uuid := devs[0].UUID
	set := func(g gpu.MockGPULoad) { r.load.Set(0, g) }
	set(gpu.MockGPULoad{UtilPercent: 10, PowerMilliW: 100000})
	r.at(t, 10*time.Second)
	set(gpu.MockGPULoad{Fail: true})
	r.at(t, 20*time.Second)
	set(gpu.MockGPULoad{UtilPercent: 30, PowerMilliW: 300000})
	r.at(t, 40*time.Second)
	set(gpu.MockGPULoad{UtilPercent: 50})
	r.at(t, 70*time.Second) // minute 1, still open at the first rollup

	r.now = r.start.Add(80 * time.Second)
	r.m.RollupGPUMinutes(ctx)
	rows, err := r.store.GPUMinutes(ctx, r.start, r.start.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var mine []int
	for i, row := range rows {
		if row.GPUUUID == uuid {
			mine = append(mine, i)
		}
	}
	if len(mine) != 1 {
		t.Fatalf("rows for GPU 0 after the first rollup: %+v", rows)
	}
	m0 := rows[mine[0]]
	if m0.Minute != r.start.Unix() || m0.Samples != 3 || m0.UtilSamples != 2 || m0.UtilSum != 40 || m0.UnreadSamples != 1 ||
		m0.PowerSamples != 2 || m0.PowerSumMW != 400000 {
		t.Fatalf("minute 0 = %+v", m0)
	}
	if mean, ok := m0.UtilMean(); !ok || mean != 20 {
		t.Errorf("mean utilisation %v %v, want 20 (the unread sample is not a 0)", mean, ok)
	}
	if len(rows) != 8 {
		t.Errorf("%d rows, want one per GPU (8) for minute 0", len(rows))
	}

	r.now = r.start.Add(130 * time.Second)
	r.m.RollupGPUMinutes(ctx)
	rows, _ = r.store.GPUMinutes(ctx, r.start, r.start.Add(time.Hour))
	count := map[int64]int{}
	for _, row := range rows {
		if row.GPUUUID == uuid {
			count[row.Minute]++
			if row.Minute == r.start.Unix()+60 && (row.Samples != 1 || row.UtilSum != 50) {
				t.Errorf("minute 1 = %+v", row)
			}
		}
	}
	if count[r.start.Unix()] != 1 || count[r.start.Unix()+60] != 1 {
		t.Errorf("rows per minute: %v, want one each for minutes 0 and 1", count)
	}

	r.m.opt.GPURollupRetention = time.Minute
	r.now = r.start.Add(10 * time.Minute)
	r.m.RollupGPUMinutes(ctx)
	rows, _ = r.store.GPUMinutes(ctx, r.start, r.start.Add(time.Hour))
	if len(rows) != 0 {
		t.Errorf("%d rows survived a 1-minute retention 10 minutes later", len(rows))
	}
}
