package orchestrator

import (
	"context"
	"testing"
	"time"

	"workbench/models"
	"workbench/orchestrator/gpu"
)

// TestStaleReadingsReadAsUnread: when whole collections fail, the last
// good reading stays in the sampler, but once it is older than two
// sampling intervals (the injected clock) GPUUse, /metrics and the pool
// (the /gpus page) show every GPU, MIG instance and slice holder as
// "could not read" — no stale number, no processes, never idle — until a
// collection succeeds again.
func TestStaleReadingsReadAsUnread(t *testing.T) {
	r := newUnitTelRig(t) // sampler interval: one hour, so max age two hours
	ctx := context.Background()
	slice := r.holder(t, "alice", "vision", r.sliceNeed(), 4301)
	mig := r.holder(t, "bob", "audio", r.migNeed(0), 4302)
	r.load.Set(2, gpu.MockGPULoad{UtilPercent: 60, Processes: []gpu.Process{{PID: 4301, UsedMemMiB: 3000, SMUtilPercent: 60}}})
	r.load.Set(0, gpu.MockGPULoad{UtilPercent: 42})
	r.mig.SetMemUsed(r.devs[5].MIG[0].UUID, 4096)
	r.at(t, 0)

	failAt := func(d time.Duration) {
		t.Helper()
		r.now = r.start.Add(d)
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		if err := r.sampler.Collect(cancelled); err == nil {
			t.Fatal("a cancelled collection succeeded")
		}
	}
	type seen struct {
		gpu0Util   bool
		sliceFig   bool
		migMem     bool
		procs      int
		poolUtil   bool
		poolMIG    bool
		dcgmSeries int
	}
	look := func() seen {
		t.Helper()
		var s seen
		uses, err := r.m.GPUUse(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range uses {
			if !u.HasSample {
				t.Errorf("GPU %d: no sample at all after a good one", u.Index)
			}
			s.procs += len(u.Processes)
			if u.Index == 0 && u.Sample.Readable(gpu.FieldUtil) {
				s.gpu0Util = u.Sample.UtilPercent == 42
			}
			for _, uu := range u.Units {
				switch {
				case uu.Holder.WorkbenchID == slice.ID && (uu.Sample.Readable(gpu.FieldUtil) || uu.Sample.Readable(gpu.FieldMemory)):
					s.sliceFig = true
				case uu.Holder.WorkbenchID == mig.ID && uu.Sample.Readable(gpu.FieldMemory):
					s.migMem = uu.Sample.MemUsedMiB == 4096
				}
			}
		}
		pool, err := r.m.pool.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range pool {
			if g.Index == 0 && g.Util != nil && g.Util.UtilPercent != nil {
				s.poolUtil = *g.Util.UtilPercent == 42
			}
			for _, pu := range g.Units {
				if pu.Kind == models.UnitMIG && pu.Reading != nil {
					s.poolMIG = true
				}
			}
		}
		for name, ss := range scrapeExposition(t, r.m) {
			if len(name) > 5 && name[:5] == "DCGM_" {
				s.dcgmSeries += len(ss)
			}
		}
		return s
	}

	// One failed collection an interval later: the reading is still
	// current (within two intervals).
	failAt(time.Hour)
	if s := look(); !s.gpu0Util || !s.sliceFig || !s.migMem || s.procs == 0 || !s.poolUtil || !s.poolMIG || s.dcgmSeries == 0 {
		t.Fatalf("within the max age the last reading should still show: %+v", s)
	}
	// Past two intervals: could not read, everywhere.
	failAt(2*time.Hour + time.Second)
	if s := look(); s != (seen{}) {
		t.Errorf("stale reading still shown as live: %+v", s)
	}
	if _, idle := r.sampler.IdleSince(r.devs[0].UUID); idle {
		t.Error("a GPU that could not be read is idle")
	}
	// A good collection brings it back.
	r.at(t, 3*time.Hour)
	if s := look(); !s.gpu0Util || !s.sliceFig || !s.migMem || s.procs == 0 || !s.poolUtil || s.dcgmSeries == 0 {
		t.Errorf("after recovery: %+v", s)
	}
}
