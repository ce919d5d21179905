package orchestrator

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"workbench/models"
	"workbench/models/pricing"
)

// Preemption of MIG instances and shared slices (issue 12 §3 for every
// kind of unit): an interactive launch that needs a MIG 1g.10gb instance
// (or a slice) while preemptible runs hold them all takes the newest one's
// unit after the grace, with the notice file, the run ending preempted and
// resuming when a unit frees — billed at the kind's preemptible rate.
func TestMemPreemptMIGInstance(t *testing.T) { testMemPreemptUnit(t, "mig-1g", models.UnitMIG) }

func TestMemPreemptSharedSlice(t *testing.T) { testMemPreemptUnit(t, "slice", models.UnitSlice) }

// unitKey names a unit for comparison: the MIG UUID, or the GPU and slice
// number.
func unitKey(u models.Unit) string {
	if u.Slice != nil {
		return fmt.Sprintf("%s/slice/%d", u.UUID, *u.Slice)
	}
	return u.UUID
}

func testMemPreemptUnit(t *testing.T, flavor, kind string) {
	t.Parallel()
	r, advance := clockedUnitRig(t)
	ctx := context.Background()
	mr := r.mem()
	newUser := func(name string) *models.User {
		u, err := r.store.CreateUser(ctx, models.NewUser{Username: name, Password: name + "-password", Role: "user"})
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	dave, eve := newUser("dave"), newUser("eve")
	// Both units (2 instances of 1g.10gb, or 2 slices) held by dave's
	// preemptible runs, a minute apart; only the newest auto-resumes.
	var victims []*models.Workbench
	for i := 0; i < 2; i++ {
		wb, err := r.m.Launch(ctx, dave, LaunchRequest{Name: fmt.Sprintf("spot-%d", i), Image: "mem", Flavor: flavor, Preemptible: true, AutoResume: i == 1})
		if err != nil {
			t.Fatal(err)
		}
		got := mr.waitState(t, wb.ID, models.StateRunning, models.StateFailed)
		if got.State != models.StateRunning || !got.Preemptible || len(got.Units) != 1 || got.Units[0].Kind != kind {
			t.Fatalf("spot-%d: %s preemptible=%v units %+v (%s)", i, got.State, got.Preemptible, got.Units, got.Reason)
		}
		victims = append(victims, got)
		advance(time.Minute)
	}
	newest, oldest := victims[1], victims[0]
	iv, err := r.store.OpenIntervalOf(ctx, newest.ID)
	if err != nil || iv.Tier != pricing.TierPreemptible || iv.UnitKind != kind {
		t.Fatalf("interval of a preemptible %s run: tier %q kind %q (%v)", kind, iv.Tier, iv.UnitKind, err)
	}
	// Its rate is the kind's own, discounted (seeded 70 % off).
	scheds, err := r.store.Schedules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	shape := WorkbenchShape(&models.Flavor{GPUModel: r.gpus[0].Model, GPUCount: 1, UnitKind: kind, MIGProfile: newest.Units[0].Profile}, true)
	res, model := pricing.UnitRate(shape)
	full, ok1 := scheds[pricing.ScheduleKey(res, model)].At(time.Now())
	cut, ok2 := scheds[pricing.UnitTierKey(res, pricing.TierPreemptible, model)].At(time.Now())
	if !ok1 || !ok2 || cut.Micros != full.Micros*30/100 {
		t.Fatalf("%s rate %d (%v), preemptible %d (%v): want 30 %% of it", res, full.Micros, ok1, cut.Micros, ok2)
	}

	// An interactive launch of the same kind queues; the newest holder is
	// told to yield, the other is not.
	want, err := r.m.Launch(ctx, eve, LaunchRequest{Name: "interactive", Image: "mem", Flavor: flavor, Queue: true})
	if err != nil {
		t.Fatal(err)
	}
	if want.State != models.StateQueued {
		t.Fatalf("interactive launch is %s", want.State)
	}
	got, _ := r.store.WorkbenchByID(ctx, newest.ID)
	if got.PreemptAt == nil || !got.PreemptAt.Equal(r.m.now().Add(120*time.Second)) {
		t.Fatalf("newest victim: preempt at %v", got.PreemptAt)
	}
	notice, ok := r.rt.HomeFile(got.ContainerID, PreemptFile(got.ID))
	if !ok || strings.TrimSpace(string(notice)) != got.PreemptAt.UTC().Format(time.RFC3339) {
		t.Fatalf("notice file %q (%v)", notice, ok)
	}
	if w, _ := r.store.WorkbenchByID(ctx, oldest.ID); w.PreemptAt != nil {
		t.Fatal("the older run was told to yield too: one unit is needed")
	}
	if w, _ := r.store.WorkbenchByID(ctx, want.ID); !strings.Contains(w.QueueReason, "preemptible work is yielding") {
		t.Fatalf("queued reason %q", w.QueueReason)
	}
	// Through the grace it runs on.
	advance(119 * time.Second)
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if w, _ := r.store.WorkbenchByID(ctx, newest.ID); w.State != models.StateRunning {
		t.Fatalf("stopped before the grace ended: %s", w.State)
	}
	advance(time.Second)
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	placed := mr.waitState(t, want.ID, models.StateRunning, models.StateFailed)
	if placed.State != models.StateRunning || len(placed.Units) != 1 || unitKey(placed.Units[0]) != unitKey(newest.Units[0]) {
		t.Fatalf("interactive: %s units %+v, want the victim's unit %s (%s)", placed.State, placed.Units, unitKey(newest.Units[0]), placed.Reason)
	}
	if req := r.deviceRequest(t, placed.ID); len(req.UUIDs) != 1 || req.UUIDs[0] != models.DeviceIDs(newest.Units)[0] {
		t.Fatalf("device request %+v, want %v", req, models.DeviceIDs(newest.Units))
	}
	// Auto-resume: preempted, queued again, billed to its exit.
	resumed := mr.waitState(t, newest.ID, models.StateQueued)
	hist, _ := r.store.WorkbenchHistory(ctx, newest.ID)
	sawPreempted := false
	for _, h := range hist {
		sawPreempted = sawPreempted || (h.State == models.StatePreempted && strings.HasPrefix(h.Message, "preempted:"))
	}
	if !sawPreempted || len(resumed.Units) != 0 {
		t.Fatalf("history %+v, units %+v", hist, resumed.Units)
	}
	ivs, err := r.store.IntervalsOf(ctx, newest.ID)
	if err != nil || len(ivs) != 1 || ivs[0].EndedAt == nil {
		t.Fatalf("intervals %+v (%v)", ivs, err)
	}
	// The oldest stops: the resumed run takes its unit.
	if err := r.m.Stop(ctx, oldest.ID, ""); err != nil {
		t.Fatal(err)
	}
	back := mr.waitState(t, newest.ID, models.StateRunning, models.StateFailed)
	if back.State != models.StateRunning || len(back.Units) != 1 || unitKey(back.Units[0]) != unitKey(oldest.Units[0]) {
		t.Fatalf("resumed: %s units %+v (%s)", back.State, back.Units, back.Reason)
	}
	if ivs, _ := r.store.IntervalsOf(ctx, newest.ID); len(ivs) != 2 || ivs[1].Tier != pricing.TierPreemptible {
		t.Fatalf("intervals after the resume %+v", ivs)
	}
	// Never the interactive run: a second interactive launch waits, no
	// victim chosen among non-preemptible work.
	more, err := r.m.Launch(ctx, eve, LaunchRequest{Name: "interactive-2", Image: "mem", Flavor: flavor, Queue: true})
	if err != nil {
		t.Fatal(err)
	}
	if w, _ := r.store.WorkbenchByID(ctx, placed.ID); w.PreemptAt != nil {
		t.Fatal("non-preemptible work told to yield")
	}
	if w, _ := r.store.WorkbenchByID(ctx, back.ID); w.PreemptAt == nil {
		t.Fatal("the resumed preemptible run was not told to yield to the second interactive launch")
	}
	if w, _ := r.store.WorkbenchByID(ctx, more.ID); w.State != models.StateQueued {
		t.Fatalf("second interactive: %s", w.State)
	}
}
