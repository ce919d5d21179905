package models

import (
	"context"
	"strings"
	"testing"
	"time"
)

// The orphan units every page with free counts reads (about 1 % of the
// home page's CPU) are cached until the table is written: what
// reconciliation records (a new orphan, a moved removal time) and what the
// sweep frees is seen by the next read, as is a raw write, and reads in
// between do not query.
func TestOrphanUnitsCacheFollowsWrites(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	read := func() []OrphanUnit {
		t.Helper()
		rows, err := s.OrphanUnits(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	set := func(holds ...OrphanHold) int {
		t.Helper()
		freed, err := s.SetOrphanUnits(ctx, holds)
		if err != nil {
			t.Fatal(err)
		}
		return freed
	}
	queriesOf := func(fn func()) int {
		n := 0
		for _, q := range captureReads(t, s, fn) {
			if strings.Contains(q.sql, "orphan_units") {
				n++
			}
		}
		return n
	}
	if got := read(); len(got) != 0 {
		t.Fatalf("orphan units of a new store: %+v", got)
	}

	at := time.Date(2026, 12, 6, 14, 20, 0, 0, time.UTC)
	hold := OrphanHold{ContainerID: "c-1", Container: "workbench-restored", RemoveAt: at,
		Units: []Unit{{Kind: UnitGPU, UUID: "GPU-1", GPUUUID: "GPU-1"}}}
	set(hold)
	if got := read(); len(got) != 1 || got[0].UnitID != "GPU-1" || !got[0].RemoveAt.Equal(at) {
		t.Fatalf("after reconciliation recorded an orphan: %+v", got)
	}
	if n := queriesOf(func() { read(); read(); read() }); n != 0 {
		t.Errorf("three reads with the table unchanged ran %d queries of orphan_units, want 0", n)
	}

	// A caller changing its copy does not change the cache.
	mine := read()
	mine[0].Container = "changed by a caller"
	if got := read(); got[0].Container != "workbench-restored" {
		t.Fatalf("OrphanUnits handed out the cached slice itself: %+v", got)
	}

	hold.RemoveAt = at.Add(time.Hour)
	set(hold)
	if got := read(); len(got) != 1 || !got[0].RemoveAt.Equal(at.Add(time.Hour)) {
		t.Fatalf("after the removal time moved: %+v, want %v", got, at.Add(time.Hour))
	}

	if freed := set(); freed != 1 {
		t.Fatalf("the sweep freed %d units, want 1", freed)
	}
	if got := read(); len(got) != 0 {
		t.Fatalf("after the sweep freed the unit: %+v", got)
	}

	if err := s.db.Exec(`INSERT INTO orphan_units (unit_id, kind, gpu_uuid, container_id, container, remove_at)
		VALUES ('GPU-2', 'gpu', 'GPU-2', 'c-2', 'workbench-other', ?)`, at).Error; err != nil {
		t.Fatal(err)
	}
	if got := read(); len(got) != 1 || got[0].UnitID != "GPU-2" {
		t.Fatalf("after a raw insert: %+v", got)
	}
}
