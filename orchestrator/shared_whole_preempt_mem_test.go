package orchestrator

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// Taking a shared GPU whole (issue 12 §3; docs/scheduling.md): when no
// whole GPU is free and no preemptible whole-GPU run can make room, an
// interactive whole-GPU launch takes a shared GPU whose every slice is held
// by preemptible work: all its holders get the notice, stop after the
// grace (preempted, with the reason; auto-resume re-queues), and the
// launch starts on that GPU, bound whole. Non-preemptible slice holders
// keep their GPU; with two candidates, the one with the fewest victims.

// fillWhole launches non-preemptible whole-GPU workbenches until no whole
// GPU is free.
func (r *unitRig) fillWhole(t *testing.T) []*models.Workbench {
	t.Helper()
	var out []*models.Workbench
	for i := 0; ; i++ {
		wb, err := r.m.Launch(context.Background(), r.owner, LaunchRequest{Name: fmt.Sprintf("whole-%d", i), Image: "mem", Flavor: "whole"})
		if refusedCode(err) == "no_capacity" {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := r.mem().waitState(t, wb.ID, models.StateRunning, models.StateFailed); got.State != models.StateRunning {
			t.Fatalf("whole-%d: %s (%s)", i, got.State, got.Reason)
		}
		out = append(out, wb)
		if i > 8 {
			t.Fatal("more whole GPUs than the mock has")
		}
	}
}

// launchSlice launches a slice for u and waits until it runs.
func (r *unitRig) launchSlice(t *testing.T, u *models.User, name string, preemptible, autoResume bool) *models.Workbench {
	t.Helper()
	wb, err := r.m.Launch(context.Background(), u, LaunchRequest{Name: name, Image: "mem", Flavor: "slice", Preemptible: preemptible, AutoResume: autoResume})
	if err != nil {
		t.Fatal(err)
	}
	got := r.mem().waitState(t, wb.ID, models.StateRunning, models.StateFailed)
	if got.State != models.StateRunning || len(got.Units) != 1 || got.Units[0].Kind != models.UnitSlice || got.Preemptible != preemptible {
		t.Fatalf("%s: %s units %+v preemptible %v (%s)", name, got.State, got.Units, got.Preemptible, got.Reason)
	}
	return got
}

func TestMemPreemptSliceHoldersForAWholeGPU(t *testing.T) {
	t.Parallel()
	r, advance := clockedUnitRig(t)
	ctx := context.Background()
	mr := r.mem()
	dave, eve := r.newUser(t, "dave"), r.newUser(t, "eve")
	// The shared GPU's 2 slices: dave's preemptible runs, a minute apart;
	// the newer auto-resumes.
	spot0 := r.launchSlice(t, dave, "spot-0", true, false)
	advance(time.Minute)
	spot1 := r.launchSlice(t, dave, "spot-1", true, true)
	advance(time.Minute)
	for _, wb := range []*models.Workbench{spot0, spot1} {
		if wb.Units[0].GPUUUID != r.shared {
			t.Fatalf("%s on %s, want the shared GPU %s", wb.Name, wb.Units[0].GPUUUID, r.shared)
		}
	}
	if len(r.fillWhole(t)) == 0 {
		t.Fatal("no whole GPU in the rig")
	}

	want, err := r.m.Launch(ctx, eve, LaunchRequest{Name: "interactive", Image: "mem", Flavor: "whole", Queue: true})
	if err != nil {
		t.Fatal(err)
	}
	if want.State != models.StateQueued {
		t.Fatalf("interactive launch is %s", want.State)
	}
	// Both holders are told to yield, with the notice file.
	at := r.m.now().Add(120 * time.Second)
	for _, v := range []*models.Workbench{spot0, spot1} {
		got, _ := r.store.WorkbenchByID(ctx, v.ID)
		if got.PreemptAt == nil || !got.PreemptAt.Equal(at) {
			t.Fatalf("%s: preempt at %v, want %v", v.Name, got.PreemptAt, at)
		}
		notice, ok := r.rt.HomeFile(got.ContainerID, PreemptFile(got.ID))
		if !ok || strings.TrimSpace(string(notice)) != at.UTC().Format(time.RFC3339) {
			t.Fatalf("%s: notice file %q (%v)", v.Name, notice, ok)
		}
		if !strings.Contains(got.Reason, "preemptible: a higher-priority launch needs these GPUs") {
			t.Fatalf("%s: reason %q", v.Name, got.Reason)
		}
	}
	if w, _ := r.store.WorkbenchByID(ctx, want.ID); !strings.Contains(w.QueueReason, "a shared GPU, taken whole") {
		t.Fatalf("queued reason %q", w.QueueReason)
	}
	// A slice launch meanwhile gets no slice of the GPU being freed.
	late, err := r.m.Launch(ctx, dave, LaunchRequest{Name: "late-slice", Image: "mem", Flavor: "slice", Preemptible: true, Queue: true})
	if err != nil {
		t.Fatal(err)
	}
	if late.State != models.StateQueued {
		t.Fatalf("a slice launch while the shared GPU is claimed: %s", late.State)
	}
	// Through the grace they run on; a drain then asks for no one else.
	advance(119 * time.Second)
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	for _, v := range []*models.Workbench{spot0, spot1} {
		if w, _ := r.store.WorkbenchByID(ctx, v.ID); w.State != models.StateRunning {
			t.Fatalf("%s stopped before the grace ended: %s", v.Name, w.State)
		}
	}
	advance(time.Second)
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	placed := mr.waitState(t, want.ID, models.StateRunning, models.StateFailed)
	if placed.State != models.StateRunning || len(placed.Units) != 1 || placed.Units[0].Kind != models.UnitGPU || placed.Units[0].UUID != r.shared || placed.Shared {
		t.Fatalf("interactive: %s units %+v shared %v, want the shared GPU %s whole (%s)", placed.State, placed.Units, placed.Shared, r.shared, placed.Reason)
	}
	if req := r.deviceRequest(t, placed.ID); len(req.UUIDs) != 1 || req.UUIDs[0] != r.shared {
		t.Fatalf("device request %+v, want %s", req, r.shared)
	}
	// The pool shows the GPU in use, every slice of it held by the launch.
	gpus, err := r.m.pool.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range gpus {
		if g.UUID == r.shared && (g.WorkbenchID != placed.ID || g.FreeUnits() != 0 || len(g.Units) != 2 || g.Units[0].WorkbenchID != placed.ID) {
			t.Fatalf("pool: shared GPU held whole shows holder %q, %d free slices, units %+v", g.WorkbenchID, g.FreeUnits(), g.Units)
		}
	}
	// Both preempted with the reason; the auto-resume one queued again.
	for _, v := range []*models.Workbench{spot0, spot1} {
		hist, _ := r.store.WorkbenchHistory(ctx, v.ID)
		saw := false
		for _, h := range hist {
			saw = saw || (h.State == models.StatePreempted && strings.HasPrefix(h.Message, "preempted: a higher-priority launch needed its GPUs"))
		}
		if !saw {
			t.Fatalf("%s: history %+v", v.Name, hist)
		}
		ivs, err := r.store.IntervalsOf(ctx, v.ID)
		if err != nil || len(ivs) != 1 || ivs[0].EndedAt == nil {
			t.Fatalf("%s: intervals %+v (%v)", v.Name, ivs, err)
		}
	}
	if w, _ := r.store.WorkbenchByID(ctx, spot0.ID); w.State != models.StatePreempted {
		t.Fatalf("spot-0 (no auto-resume): %s", w.State)
	}
	resumed := mr.waitState(t, spot1.ID, models.StateQueued)
	// While the GPU is held whole, none of its slices is handed out.
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{resumed.ID, late.ID} {
		if w, _ := r.store.WorkbenchByID(ctx, id); w.State != models.StateQueued {
			t.Fatalf("a slice of the GPU held whole was handed out to %s: %s", w.Name, w.State)
		}
	}
	// It stops: the GPU is shared again, the waiting slices run on it.
	if err := r.m.Stop(ctx, placed.ID, ""); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{resumed.ID, late.ID} {
		back := mr.waitState(t, id, models.StateRunning, models.StateFailed)
		if back.State != models.StateRunning || len(back.Units) != 1 || back.Units[0].Kind != models.UnitSlice || back.Units[0].GPUUUID != r.shared {
			t.Fatalf("%s after the whole run stopped: %s units %+v (%s)", back.Name, back.State, back.Units, back.Reason)
		}
	}
}

// A shared GPU with a non-preemptible slice holder is never taken whole:
// its preemptible neighbour is not told to yield either (that would free
// nothing a whole-GPU launch can use).
func TestMemSharedGPUWithNonPreemptibleHolderKept(t *testing.T) {
	t.Parallel()
	r, advance := clockedUnitRig(t)
	ctx := context.Background()
	dave, eve := r.newUser(t, "dave"), r.newUser(t, "eve")
	keep := r.launchSlice(t, r.owner, "keep", false, false)
	spot := r.launchSlice(t, dave, "spot", true, true)
	r.fillWhole(t)
	want, err := r.m.Launch(ctx, eve, LaunchRequest{Name: "interactive", Image: "mem", Flavor: "whole", Queue: true})
	if err != nil {
		t.Fatal(err)
	}
	advance(time.Hour)
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	for _, v := range []*models.Workbench{keep, spot} {
		if w, _ := r.store.WorkbenchByID(ctx, v.ID); w.PreemptAt != nil || w.State != models.StateRunning {
			t.Fatalf("%s: %s, preempt at %v", v.Name, w.State, w.PreemptAt)
		}
	}
	if w, _ := r.store.WorkbenchByID(ctx, want.ID); w.State != models.StateQueued || strings.Contains(w.QueueReason, "yielding") {
		t.Fatalf("interactive: %s (%q)", w.State, w.QueueReason)
	}
}

// With two shared GPUs whose slices are all held by preemptible work, the
// one with the fewest victims is taken — even when the newest run is on the
// other one.
func TestMemSharedGPUFewestVictimsTaken(t *testing.T) {
	t.Parallel()
	r, advance := clockedUnitRig(t)
	ctx := context.Background()
	mr := r.mem()
	dave, eve := r.newUser(t, "dave"), r.newUser(t, "eve")
	small := r.gpus[4].UUID
	// Small in two slices (one is refused: it would be the whole GPU as a
	// slice), the rig's shared GPU in three.
	for g, n := range map[string]int{r.shared: 3, small: 2} {
		if err := r.m.pool.SetShared(ctx, g, models.SharedSetting{Slices: n}, "admin"); err != nil {
			t.Fatal(err)
		}
	}
	// The least crowded shared GPU first, ties in GPU order: p0, p2 and p4
	// on the rig's shared GPU, p1 and p3 on small.
	var runs []*models.Workbench
	for i := 0; i < 5; i++ {
		runs = append(runs, r.launchSlice(t, dave, fmt.Sprintf("p%d", i), true, false))
		advance(time.Minute)
	}
	for i, v := range runs {
		if on := v.Units[0].GPUUUID; (on == small) != (i%2 == 1) {
			t.Fatalf("p%d on %s", i, on)
		}
	}
	r.fillWhole(t)
	want, err := r.m.Launch(ctx, eve, LaunchRequest{Name: "interactive", Image: "mem", Flavor: "whole", Queue: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range runs {
		w, _ := r.store.WorkbenchByID(ctx, v.ID)
		if (w.PreemptAt != nil) != (i%2 == 1) {
			t.Fatalf("p%d: preempt at %v; only p1 and p3 (the fewer on their GPU) should yield", i, w.PreemptAt)
		}
	}
	advance(120 * time.Second)
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	placed := mr.waitState(t, want.ID, models.StateRunning, models.StateFailed)
	if placed.State != models.StateRunning || len(placed.Units) != 1 || placed.Units[0].UUID != small || placed.Units[0].Kind != models.UnitGPU {
		t.Fatalf("interactive: %s units %+v, want %s whole (%s)", placed.State, placed.Units, small, placed.Reason)
	}
	for _, i := range []int{1, 3} {
		if w, _ := r.store.WorkbenchByID(ctx, runs[i].ID); w.State != models.StatePreempted {
			t.Fatalf("p%d: %s", i, w.State)
		}
	}
	for _, i := range []int{0, 2, 4} {
		if w, _ := r.store.WorkbenchByID(ctx, runs[i].ID); w.State != models.StateRunning {
			t.Fatalf("p%d: %s", i, w.State)
		}
	}
}
