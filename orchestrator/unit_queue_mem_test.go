package orchestrator

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"workbench/models"
)

// The queue over MIG instances and shared slices (issue 12 §1–2): each
// kind of unit is a pool of its own; a launch with queue on waits for a
// unit of its kind and starts when one is freed.

// clockedUnitRig is a unitRig whose manager, store and runtime read a clock
// the test moves.
func clockedUnitRig(t *testing.T) (*unitRig, func(time.Duration)) {
	t.Helper()
	r := newUnitRig(t)
	var mu sync.Mutex
	now := time.Now().UTC()
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	r.m.SetClock(clock)
	r.store.SetClock(clock)
	r.rt.SetClock(clock)
	return r, func(d time.Duration) {
		mu.Lock()
		now = now.Add(d)
		mu.Unlock()
	}
}

func (r *unitRig) mem() *memRig { return &memRig{m: r.m, rt: r.rt, store: r.store} }

// queueWaitsThenStarts fills the units of flavor (n of them), checks the
// n+1st with queue on waits with its position and reason, and that it
// starts on the unit freed when a holder stops. It returns the placed
// workbench and the one whose unit it took.
func (r *unitRig) queueWaitsThenStarts(t *testing.T, advance func(time.Duration), flavor string, n int, reason string) (*models.Workbench, *models.Workbench) {
	t.Helper()
	ctx := context.Background()
	var holders []*models.Workbench
	for i := 0; i < n; i++ {
		holders = append(holders, r.launchRunning(t, fmt.Sprintf("%s-%d", flavor, i), flavor))
	}
	// Without queue: refused, as before.
	if _, err := r.m.Launch(ctx, r.owner, LaunchRequest{Name: "refused", Image: "mem", Flavor: flavor}); refusedCode(err) != "no_capacity" {
		t.Fatalf("launch %d+1 without queue: %v, want no_capacity", n, err)
	}
	wb, err := r.m.Launch(ctx, r.owner, LaunchRequest{Name: "waits", Image: "mem", Flavor: flavor, Queue: true})
	if err != nil {
		t.Fatal(err)
	}
	if wb.State != models.StateQueued || len(wb.Units) != 0 {
		t.Fatalf("launch %d+1 with queue: %s with units %+v, want queued with none", n, wb.State, wb.Units)
	}
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	w, _ := r.store.WorkbenchByID(ctx, wb.ID)
	if w.State != models.StateQueued || w.QueuePosition != 1 || !strings.Contains(w.QueueReason, reason+"; you are next") {
		t.Fatalf("queued: %s position %d reason %q, want %q", w.State, w.QueuePosition, w.QueueReason, reason)
	}
	advance(time.Hour)
	if err := r.m.Drain(ctx); err != nil { // nothing freed: still waits
		t.Fatal(err)
	}
	if w, _ = r.store.WorkbenchByID(ctx, wb.ID); w.State != models.StateQueued {
		t.Fatalf("started with nothing freed: %s", w.State)
	}
	freed := holders[0]
	if err := r.m.Stop(ctx, freed.ID, ""); err != nil {
		t.Fatal(err)
	}
	w = r.mem().waitState(t, wb.ID, models.StateRunning, models.StateFailed)
	if w.State != models.StateRunning {
		t.Fatalf("after a stop: %s %q", w.State, w.Reason)
	}
	return w, freed
}

// Shared slices: N workbenches on a GPU shared in N slices run, the N+1st
// with queue waits ("1 × slice … needed; 0 free") and starts on the shared
// GPU when one holder stops, labelled shared.
func TestSliceQueueWaitsThenStarts(t *testing.T) {
	t.Parallel()
	r, advance := clockedUnitRig(t)
	w, freed := r.queueWaitsThenStarts(t, advance, "slice", 2, "1 × slice of a shared H100 80GB HBM3 needed; 0 free")
	if !w.Shared || len(w.Units) != 1 || w.Units[0].Kind != models.UnitSlice || !slices.Equal(w.GPUs, []string{r.shared}) ||
		*w.Units[0].Slice != *freed.Units[0].Slice {
		t.Fatalf("placed: shared %v units %+v gpus %v; freed slice %+v", w.Shared, w.Units, w.GPUs, freed.Units)
	}
	if req := r.deviceRequest(t, w.ID); !slices.Equal(req.UUIDs, []string{r.shared}) {
		t.Fatalf("device request %+v, want the shared GPU", req)
	}
}

// MIG: both 1g.10gb instances held, the third launch with queue waits and
// starts on the freed instance, its container given exactly that MIG UUID.
func TestMIGQueueWaitsThenStarts(t *testing.T) {
	t.Parallel()
	r, advance := clockedUnitRig(t)
	w, freed := r.queueWaitsThenStarts(t, advance, "mig-1g", 2, "1 × MIG 1g.10gb of H100 80GB HBM3 needed; 0 free")
	if len(w.Units) != 1 || w.Units[0].Kind != models.UnitMIG || w.Units[0].UUID != freed.Units[0].UUID {
		t.Fatalf("placed units %+v, want the freed instance %s", w.Units, freed.Units[0].UUID)
	}
	if req := r.deviceRequest(t, w.ID); !slices.Equal(req.UUIDs, []string{w.Units[0].UUID}) {
		t.Fatalf("device request %+v, want exactly %s", req, w.Units[0].UUID)
	}
}

// A whole-GPU launch from the queue never takes a shared GPU nor one in MIG
// mode, though both have free units: with the 6 plain GPUs held it waits
// for a whole one.
func TestQueueWholeGPUNeverTakesSharedOrMIG(t *testing.T) {
	t.Parallel()
	r, _ := clockedUnitRig(t)
	ctx := context.Background()
	var held []*models.Workbench
	for i := 0; i < len(r.gpus)-2; i++ {
		wb := r.launchRunning(t, fmt.Sprintf("w%d", i), "whole")
		if wb.GPUs[0] == r.gpus[2].UUID || wb.GPUs[0] == r.shared {
			t.Fatalf("whole GPU on a MIG or shared GPU: %v", wb.GPUs)
		}
		held = append(held, wb)
	}
	wb, err := r.m.Launch(ctx, r.owner, LaunchRequest{Name: "waits", Image: "mem", Flavor: "whole", Queue: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	w, _ := r.store.WorkbenchByID(ctx, wb.ID)
	if w.State != models.StateQueued || !strings.Contains(w.QueueReason, "1 × H100 80GB HBM3 needed; 0 free") {
		t.Fatalf("whole launch with only shared/MIG units free: %s %q", w.State, w.QueueReason)
	}
	// A slice and a MIG instance still launch meanwhile: other pools.
	r.launchRunning(t, "s", "slice")
	r.launchRunning(t, "m", "mig-1g")
	if err := r.m.Stop(ctx, held[0].ID, ""); err != nil {
		t.Fatal(err)
	}
	w = r.mem().waitState(t, wb.ID, models.StateRunning, models.StateFailed)
	if w.State != models.StateRunning || !slices.Equal(w.GPUs, held[0].GPUs) {
		t.Fatalf("placed %s %q on %v, want the freed %v", w.State, w.Reason, w.GPUs, held[0].GPUs)
	}
}

// Concurrent launches with queue and drains on a GPU shared in 2 slices
// never bind a slice twice nor more slices than exist; the rest wait. Half
// the drains run in a second manager over the same database (its own drain
// lock), so only the drain's BEGIN IMMEDIATE transaction keeps them apart.
func TestQueueConcurrentDrainsNeverBindASliceTwice(t *testing.T) {
	t.Parallel()
	r, _ := clockedUnitRig(t)
	ctx := context.Background()
	other := NewManager(r.store, r.m.pool, r.rt, "unittest", Options{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	other.SetClock(r.m.clock)
	t.Cleanup(other.Wait)
	const n = 6
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := 0; i < n; i++ {
		wg.Add(2)
		go func(i int) {
			defer wg.Done()
			_, err := r.m.Launch(ctx, r.owner, LaunchRequest{Name: fmt.Sprintf("c%d", i), Image: "mem", Flavor: "slice", Queue: true})
			errs <- err
		}(i)
		go func(i int) {
			defer wg.Done()
			if i%2 == 0 {
				errs <- other.Drain(ctx)
				return
			}
			errs <- r.m.Drain(ctx)
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	bound, err := r.store.UnitAllocations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]string{}
	for _, u := range bound {
		if u.Kind != models.UnitSlice {
			continue
		}
		if prev, dup := seen[*u.Slice]; dup {
			t.Fatalf("slice %d bound to %s and %s", *u.Slice, prev, u.WorkbenchID)
		}
		seen[*u.Slice] = u.WorkbenchID
	}
	if len(seen) != 2 {
		t.Fatalf("%d slices bound, want both of the 2", len(seen))
	}
	all, err := r.store.ListWorkbenches(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	queued := 0
	for _, w := range all {
		if w.State == models.StateQueued {
			queued++
		}
	}
	if queued != n-2 {
		t.Fatalf("%d queued, want %d", queued, n-2)
	}
}
