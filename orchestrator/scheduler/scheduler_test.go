package scheduler

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"
)

var (
	t0   = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	h100 = PoolGPU("NVIDIA H100 80GB HBM3")
)

func req(id string, user int64, units, prio int, arrived time.Duration) Request {
	return Request{ID: id, User: user, Pool: h100, Units: units, Priority: prio, Arrived: t0.Add(arrived)}
}

func TestOrderPriorityThenFairShareThenArrival(t *testing.T) {
	q := []Request{
		req("batch-early", 1, 1, 50, 0),
		req("heavy-user", 2, 1, 100, time.Second),
		req("light-user", 3, 1, 100, 2*time.Second),
		req("light-user-later", 3, 1, 100, 3*time.Second),
		req("interactive-first", 4, 1, 100, 3*time.Second),
	}
	usage := map[int64]float64{2: 3600 * 5, 3: 60, 4: 60}
	got := ids(Order(q, usage))
	// light-user and interactive-first tie on usage: arrival decides;
	// light-user-later and interactive-first arrived together: id decides.
	want := []string{"light-user", "interactive-first", "light-user-later", "heavy-user", "batch-early"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
}

func TestDecayedUsageHalvesPerHalfLife(t *testing.T) {
	now := t0.Add(10 * time.Hour)
	spans := []Span{
		{User: 1, Units: 1, Start: now.Add(-time.Hour), End: now},                         // 1 GPU-hour just now
		{User: 2, Units: 1, Start: now.Add(-3 * time.Hour), End: now.Add(-2 * time.Hour)}, // 1 GPU-hour, 2 h ago
		{User: 3, Units: 2, Start: now.Add(-time.Hour)},                                   // still running
	}
	u := DecayedUsage(spans, now, time.Hour)
	// ∫0..1h 2^(-t/h) dt = h/ln2 · (1 - 1/2)
	one := 3600 / math.Ln2 * 0.5
	if math.Abs(u[1]-one) > 1e-6 {
		t.Fatalf("user 1 = %f, want %f", u[1], one)
	}
	if math.Abs(u[2]-one/4) > 1e-6 {
		t.Fatalf("usage two half-lives old should count a quarter: %f vs %f", u[2], one/4)
	}
	if math.Abs(u[3]-2*one) > 1e-6 {
		t.Fatalf("open span, 2 units = %f, want %f", u[3], 2*one)
	}
	if len(DecayedUsage(spans, now, 0)) != 0 {
		t.Fatal("no half-life: no fair share")
	}
}

func TestDecideStartsWhatFitsAndExplainsTheRest(t *testing.T) {
	s := Snapshot{Now: t0, Free: map[Pool]int{h100: 1},
		Queue: []Request{req("a", 1, 2, 100, 0), req("b", 2, 1, 100, time.Second), req("c", 3, 1, 100, 2*time.Second)},
		Running: []Running{
			{ID: "r1", Pool: h100, Units: 1, EndsBy: t0.Add(time.Hour)},
			{ID: "r2", Pool: h100, Units: 6},
		},
		Policy: Policy{Backfill: true}}
	p := Decide(s)
	// a needs 2, 1 free: blocked; it starts in an hour when r1 ends (2
	// free then, 0 extra). b has no maximum runtime: it would delay a.
	if len(p.Start) != 0 {
		t.Fatalf("started %v; nothing may pass the blocked head", p.Start)
	}
	wa := p.Waiting["a"]
	if wa.Position != 1 || wa.Need != 2 || wa.Free != 1 || !wa.EstimatedStart.Equal(t0.Add(time.Hour)) {
		t.Fatalf("a waits %+v", wa)
	}
	if wa.Reason != "2 × H100 80GB HBM3 needed; 1 free" {
		t.Fatalf("reason %q", wa.Reason)
	}
	if wb := p.Waiting["b"]; wb.Position != 2 || wb.Ahead != 1 || wb.Reason != "would delay an earlier request that waits for the same GPUs" {
		t.Fatalf("b waits %+v", wb)
	}
	if wc := p.Waiting["c"]; wc.Position != 3 || !wc.EstimatedStart.IsZero() {
		t.Fatalf("c: %+v (its start depends on r2, which has no end: unknown)", wc)
	}
}

func TestBackfillOnlyWhatEndsBeforeTheHeadStarts(t *testing.T) {
	short := req("short", 2, 1, 100, time.Second)
	short.MaxRuntime = 30 * time.Minute
	long := req("long", 3, 1, 100, 2*time.Second)
	long.MaxRuntime = 2 * time.Hour
	s := Snapshot{Now: t0, Free: map[Pool]int{h100: 1},
		Queue:   []Request{req("big", 1, 2, 100, 0), short, long},
		Running: []Running{{ID: "r1", Pool: h100, Units: 1, EndsBy: t0.Add(time.Hour)}},
		Policy:  Policy{Backfill: true}}
	p := Decide(s)
	if !reflect.DeepEqual(p.Start, []string{"short"}) {
		t.Fatalf("start %v, want only the 30-minute request (ends before big can start)", p.Start)
	}
	if _, ok := p.Waiting["long"]; !ok {
		t.Fatal("the 2-hour request would delay big: it must wait")
	}
	s.Policy.Backfill = false
	if p := Decide(s); len(p.Start) != 0 {
		t.Fatalf("without backfill nothing passes the head: %v", p.Start)
	}
}

func TestBackfillUsesUnitsTheHeadWillNotNeed(t *testing.T) {
	// 1 free; r1 (1 unit) and r2 (2 units) end in an hour: then 4 free,
	// big needs 3, 1 extra. A 1-unit request with no maximum runtime may
	// take the free unit: big still starts in an hour.
	s := Snapshot{Now: t0, Free: map[Pool]int{h100: 1},
		Queue: []Request{req("big", 1, 3, 100, 0), req("small", 2, 1, 100, time.Second), req("small2", 3, 1, 100, 2*time.Second)},
		Running: []Running{{ID: "r1", Pool: h100, Units: 1, EndsBy: t0.Add(time.Hour)},
			{ID: "r2", Pool: h100, Units: 2, EndsBy: t0.Add(time.Hour)}},
		Policy: Policy{Backfill: true}}
	p := Decide(s)
	if !reflect.DeepEqual(p.Start, []string{"small"}) {
		t.Fatalf("start %v", p.Start)
	}
}

func TestExpiry(t *testing.T) {
	a := req("a", 1, 1, 100, 0)
	a.Expires = t0
	b := req("b", 1, 1, 100, 0)
	b.Expires = t0.Add(time.Second)
	p := Decide(Snapshot{Now: t0, Free: map[Pool]int{h100: 0}, Queue: []Request{a, b}})
	if !reflect.DeepEqual(p.Expire, []string{"a"}) || p.Waiting["b"].Position != 1 {
		t.Fatalf("plan %+v", p)
	}
}

func TestQuotaBlockedKeepsPlaceButDoesNotHoldOthers(t *testing.T) {
	a := req("a", 1, 1, 100, 0)
	a.Blocked = "your quota allows 1 GPU at once"
	p := Decide(Snapshot{Now: t0, Free: map[Pool]int{h100: 1}, Queue: []Request{a, req("b", 2, 1, 100, time.Second)}})
	if !reflect.DeepEqual(p.Start, []string{"b"}) || p.Waiting["a"].Reason != a.Blocked {
		t.Fatalf("plan %+v", p)
	}
}

func TestVictimsNewestFirstFewestWasted(t *testing.T) {
	run := []Running{
		{ID: "old1", Pool: h100, Units: 1, Priority: 10, Preemptible: true, Started: t0},
		{ID: "new2", Pool: h100, Units: 2, Priority: 10, Preemptible: true, Started: t0.Add(2 * time.Hour)},
		{ID: "mid1", Pool: h100, Units: 1, Priority: 10, Preemptible: true, Started: t0.Add(time.Hour)},
		{ID: "mid4", Pool: h100, Units: 4, Priority: 10, Preemptible: true, Started: t0.Add(90 * time.Minute)},
		{ID: "interactive", Pool: h100, Units: 8, Priority: 10, Started: t0.Add(3 * time.Hour)},
	}
	hi := req("hi", 9, 1, 100, 0)
	cases := []struct {
		deficit int
		want    []string
	}{
		{1, []string{"mid1"}},                         // newest of the 1-unit runs: nothing wasted
		{2, []string{"new2"}},                         // one run exactly covers it
		{3, []string{"mid4"}},                         // 1 wasted; newest-first greedy (new2+mid4) would waste 3
		{8, []string{"new2", "mid4", "mid1", "old1"}}, // all preemptible work, newest first
		{9, nil}, // cannot be covered: preempt nobody
	}
	for _, c := range cases {
		got := ChooseVictims(run, hi, c.deficit, nil)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("deficit %d: %v, want %v", c.deficit, got, c.want)
		}
	}
	// Never non-preemptible work, never work of equal or higher priority.
	low := req("low", 9, 1, 10, 0)
	if got := ChooseVictims(run, low, 1, nil); got != nil {
		t.Fatalf("equal priority preempted %v", got)
	}
}

func TestDecidePreemptsOnlyForTheFirstBlockedAndCountsYielding(t *testing.T) {
	run := []Running{
		{ID: "p1", Pool: h100, Units: 1, Priority: 10, Preemptible: true, Started: t0},
		{ID: "p2", Pool: h100, Units: 1, Priority: 10, Preemptible: true, Started: t0.Add(time.Minute)},
		{ID: "i", Pool: h100, Units: 6, Priority: 100, Started: t0},
	}
	s := Snapshot{Now: t0.Add(time.Hour), Free: map[Pool]int{h100: 0}, Running: run,
		Queue:  []Request{req("a", 1, 1, 100, 0), req("b", 2, 1, 100, time.Second)},
		Policy: Policy{Preempt: true}}
	p := Decide(s)
	if !reflect.DeepEqual(p.Preempt, []string{"p2"}) {
		t.Fatalf("preempt %v, want the newest only (one pass frees for the head)", p.Preempt)
	}
	// Next pass: p2 yields; nothing more is preempted for a's unit.
	s.Running[1].Yielding = true
	if p := Decide(s); len(p.Preempt) != 0 {
		t.Fatalf("preempted again while a victim yields: %v", p.Preempt)
	}
	// Without the policy, never.
	s.Running[1].Yielding = false
	s.Policy.Preempt = false
	if p := Decide(s); len(p.Preempt) != 0 {
		t.Fatal("preemption off")
	}
}

// A launch that must preempt while a booking holds free units back from it
// preempts enough for both at once: a unit that frees up goes to the booker
// first. Before, it preempted one run per grace period (each freed unit went
// to the booking, and the estimate said it would start at the first).
func TestPreemptionFreesWhatBookingsHoldBack(t *testing.T) {
	const grace = 5 * time.Minute
	var run []Running
	for i := range 8 {
		run = append(run, Running{ID: fmt.Sprintf("p%d", i), User: 5, Pool: h100, Units: 1, Priority: 10, Preemptible: true, Started: t0.Add(time.Duration(i) * time.Minute)})
	}
	now := t0.Add(time.Hour)
	s := Snapshot{Now: now, Free: map[Pool]int{h100: 0}, Running: slices.Clone(run),
		Reservations: []Reservation{{ID: 1, User: 9, Pool: h100, Units: 2, Start: now, End: now.Add(2 * time.Hour)}},
		Queue:        []Request{req("a", 1, 1, 100, 0), req("booker", 9, 2, 100, time.Second)},
		Policy:       Policy{Preempt: true, PreemptGrace: grace}}
	p := Decide(s)
	if !reflect.DeepEqual(p.Preempt, []string{"p7", "p6", "p5"}) {
		t.Fatalf("preempt %v, want the three newest: one unit for a and the two the booking holds back", p.Preempt)
	}
	if w := p.Waiting["a"]; !w.EstimatedStart.Equal(now.Add(grace)) {
		t.Fatalf("a: %+v; want to start when the grace ends", w)
	}
	// The next drains, while they yield: nothing more, nothing let off.
	for i := range s.Running[5:] {
		s.Running[5+i].Yielding, s.Running[5+i].YieldsAt = true, now.Add(grace)
	}
	s.Now = now.Add(time.Minute)
	if p := Decide(s); len(p.Preempt) != 0 || len(p.Rescind) != 0 || !p.Waiting["a"].EstimatedStart.Equal(now.Add(grace)) {
		t.Fatalf("while they yield: preempt %v, rescind %v, a %+v", p.Preempt, p.Rescind, p.Waiting["a"])
	}
	// Gone: a takes the unit the booking does not hold, the booker its two.
	s.Now, s.Running, s.Free = now.Add(grace), s.Running[:5], map[Pool]int{h100: 3}
	if p := Decide(s); !reflect.DeepEqual(p.Start, []string{"a", "booker"}) {
		t.Fatalf("after the grace: start %v", p.Start)
	}
	// The booker first: its own booking covers it, two runs are enough.
	s.Now, s.Running, s.Free = now, run, map[Pool]int{h100: 0}
	s.Queue = []Request{req("booker", 9, 2, 100, 0), req("a", 1, 1, 100, time.Second)}
	if p := Decide(s); !reflect.DeepEqual(p.Preempt, []string{"p7", "p6"}) {
		t.Fatalf("the booker first: preempt %v, want two", p.Preempt)
	}
}

// A booker's preemptible run inside its own active booking is not
// preempted for someone else: the units it frees go back to the booking
// (and its auto-resume took them straight back), so it was preempted every
// grace period for as long as the booking lasted while the launch that
// asked still waited. Units it holds beyond its booking can be taken.
func TestPreemptionSparesARunInsideItsOwnersBooking(t *testing.T) {
	now := t0.Add(time.Hour)
	run := []Running{{ID: "bob-spot", User: 9, Pool: h100, Units: 2, Priority: 10, Preemptible: true, Started: now.Add(-time.Minute)}}
	for i := range 6 {
		run = append(run, Running{ID: fmt.Sprintf("fixed%d", i), User: 5, Pool: h100, Units: 1, Priority: 100, Started: t0})
	}
	s := Snapshot{Now: now, Free: map[Pool]int{h100: 0}, Running: run,
		Reservations: []Reservation{{ID: 1, User: 9, Pool: h100, Units: 2, Start: now.Add(-time.Minute), End: now.Add(2 * time.Hour)}},
		Queue:        []Request{req("alice", 1, 1, 100, 0)},
		Policy:       Policy{Preempt: true, PreemptGrace: 5 * time.Minute}}
	if p := Decide(s); len(p.Preempt) != 0 {
		t.Fatalf("preempt %v: the booker's run holds only its own booked units", p.Preempt)
	}
	// Three units, two booked: one can go to alice.
	s.Running[0].Units = 3
	s.Running = s.Running[:6]
	if p := Decide(s); !reflect.DeepEqual(p.Preempt, []string{"bob-spot"}) {
		t.Fatalf("preempt %v, want bob-spot's unit beyond its booking", p.Preempt)
	}
	// A member of the group the booking is for may take them.
	s.Running[0].Units = 2
	s.Running = append(s.Running, run[6])
	s.Reservations[0].Holders = []int64{9, 1}
	if p := Decide(s); !reflect.DeepEqual(p.Preempt, []string{"bob-spot"}) {
		t.Fatalf("preempt %v for a holder of the booking, want bob-spot", p.Preempt)
	}
}

func ids(rs []Request) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func TestReservationHoldsBookedUnitsForTheBooker(t *testing.T) {
	// 2 free; user 9 booked 2 from t0 to t0+2h and holds 1 already: 1 of
	// the free units is held back for them.
	s := Snapshot{Now: t0, Free: map[Pool]int{h100: 2},
		Running:      []Running{{ID: "r9", User: 9, Pool: h100, Units: 1}},
		Reservations: []Reservation{{ID: 1, User: 9, Pool: h100, Units: 2, Start: t0, End: t0.Add(2 * time.Hour)}},
		Queue:        []Request{req("a", 1, 1, 100, 0), req("b", 2, 1, 100, time.Second), req("booker", 9, 1, 50, 2*time.Second)}}
	p := Decide(s)
	if !reflect.DeepEqual(p.Start, []string{"a", "booker"}) {
		t.Fatalf("start %v, want a (the unbooked unit) and the booker (its booked one, despite a lower priority and b before it)", p.Start)
	}
	if w := p.Waiting["b"]; w.Free != 0 || w.Reason != "1 × H100 80GB HBM3 needed; 0 free (1 reserved for someone else now)" || !w.EstimatedStart.IsZero() {
		t.Fatalf("b: %+v", w)
	}
	// Outside the window the units are anyone's.
	s.Now = t0.Add(2 * time.Hour)
	if p := Decide(s); !reflect.DeepEqual(p.Start, []string{"a", "b"}) {
		t.Fatalf("after the window: %v", p.Start)
	}
	// Before anything starts, the reason names the reservation.
	s.Now = t0
	s.Queue = []Request{req("b", 2, 1, 100, time.Second)}
	s.Free = map[Pool]int{h100: 1}
	if w := Decide(s).Waiting["b"]; w.Reason != "1 × H100 80GB HBM3 needed; 0 free (1 reserved for someone else now)" {
		t.Fatalf("reason %q", w.Reason)
	}
}

// A group's booking holds its units for every member: a member's running
// unit counts against it, another member's launch uses what is left of it
// before anyone ahead, and a user outside the group waits.
func TestGroupReservationHoldsUnitsForItsMembers(t *testing.T) {
	s := Snapshot{Now: t0, Free: map[Pool]int{h100: 2},
		Running:      []Running{{ID: "r7", User: 7, Pool: h100, Units: 1}},
		Reservations: []Reservation{{ID: 1, User: 7, Holders: []int64{7, 8}, Pool: h100, Units: 2, Start: t0, End: t0.Add(2 * time.Hour)}},
		Queue:        []Request{req("outsider", 3, 1, 100, 0), req("member", 8, 1, 50, time.Second)}}
	p := Decide(s)
	if !reflect.DeepEqual(p.Start, []string{"outsider", "member"}) {
		t.Fatalf("start %v, want the outsider on the unbooked unit and the member on the group's", p.Start)
	}
	// With one unit free, it is the group's: the outsider waits, saying why.
	s.Free = map[Pool]int{h100: 1}
	p = Decide(s)
	if !reflect.DeepEqual(p.Start, []string{"member"}) {
		t.Fatalf("start %v, want only the member", p.Start)
	}
	if w := p.Waiting["outsider"]; w.Reason != "1 × H100 80GB HBM3 needed; 0 free (1 reserved for someone else now)" {
		t.Fatalf("outsider: %+v", w)
	}
	// A group without members holds its units for nobody (as booked),
	// not for the booker alone.
	s.Reservations[0].Holders = []int64{}
	s.Running = nil
	s.Queue = []Request{req("booker", 7, 1, 100, 0)}
	if p := Decide(s); len(p.Start) != 0 {
		t.Fatalf("start %v: the booker took a unit of an emptied group's booking", p.Start)
	}
}

// Pools of MIG instances and slices read as people say them, in the reason
// a request waits, and are separate pools from the whole GPUs of the model.
func TestUnitPoolLabelsAndReasons(t *testing.T) {
	const model = "NVIDIA H100 80GB HBM3"
	if _, why := Fit(PoolSlice(model), 1, 0); why != "1 × slice of a shared H100 80GB HBM3 needed; 0 free" {
		t.Fatalf("slice reason %q", why)
	}
	if _, why := Fit(PoolMIG(model, "1g.10gb"), 1, 0); why != "1 × MIG 1g.10gb of H100 80GB HBM3 needed; 0 free" {
		t.Fatalf("MIG reason %q", why)
	}
	if PoolGPU(model).Label() != "H100 80GB HBM3" {
		t.Fatalf("GPU label %q", PoolGPU(model).Label())
	}
	now := time.Unix(1_000_000, 0)
	p := Decide(Snapshot{Now: now, Free: map[Pool]int{PoolGPU(model): 3, PoolSlice(model): 0},
		Queue: []Request{{ID: "s", Pool: PoolSlice(model), Units: 1, Arrived: now}, {ID: "g", Pool: PoolGPU(model), Units: 1, Arrived: now.Add(time.Second)}}})
	if len(p.Start) != 1 || p.Start[0] != "g" || p.Waiting["s"].Position != 1 {
		t.Fatalf("plan %+v: free whole GPUs must not place a slice request, nor it hold back a GPU request", p)
	}
}

// An administrator's explicit order (a reorder) ranks within the priority
// class: after boosts, before fair share and arrival; never past a higher
// class.
func TestExplicitOrderWithinClass(t *testing.T) {
	q := []Request{
		req("first", 1, 1, 100, 0),
		req("second", 2, 1, 100, time.Second),
		req("moved-2nd", 3, 1, 100, 2*time.Second),
		req("moved-1st", 4, 1, 100, 3*time.Second),
		req("boosted", 5, 1, 100, 4*time.Second),
		req("batch-moved", 6, 1, 50, 5*time.Second),
	}
	q[2].Order, q[3].Order, q[5].Order = 2, 1, 1
	q[4].Boosted = t0
	got := ids(Order(q, map[int64]float64{1: 0, 2: 0, 3: 1e9, 4: 1e9}))
	want := []string{"boosted", "moved-1st", "moved-2nd", "first", "second", "batch-moved"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}
}

// A booking named by a request (pinned) is the only one it may use: the
// booker's other booking of the same units stays for its own launches.
func TestPinnedReservationUsesOnlyItsBooking(t *testing.T) {
	s := Snapshot{Now: t0, Free: map[Pool]int{h100: 1},
		Reservations: []Reservation{{ID: 1, User: 9, Pool: h100, Units: 1, Start: t0, End: t0.Add(time.Hour)}},
		Queue:        []Request{req("other", 1, 1, 100, 0), {ID: "pinned", User: 9, Pool: h100, Units: 1, Priority: 100, Arrived: t0.Add(time.Second), Reservation: 2}}}
	if p := Decide(s); len(p.Start) != 0 {
		t.Fatalf("start %v: the pinned request named booking 2, not 1; the free unit is booking 1's", p.Start)
	}
	s.Queue[1].Reservation = 1
	if p := Decide(s); !reflect.DeepEqual(p.Start, []string{"pinned"}) {
		t.Fatalf("pinned to its booking: start %v", p.Start)
	}
}

// A request waiting for its booking's window is estimated to start when the
// window opens, not when units free up now (it cannot start before, and the
// booking holds its units from then).
func TestPinnedReservationBeforeItsWindowStartsWhenItOpens(t *testing.T) {
	opens := t0.Add(30 * time.Minute)
	s := Snapshot{Now: t0, Free: map[Pool]int{h100: 2},
		Reservations: []Reservation{{ID: 1, User: 9, Pool: h100, Units: 2, Start: opens, End: opens.Add(time.Hour)}},
		Queue: []Request{{ID: "pinned", User: 9, Pool: h100, Units: 1, Priority: 100, Arrived: t0, Reservation: 1,
			Blocked: "waiting for your reservation #1", NotBefore: opens}}}
	p := Decide(s)
	w, ok := p.Waiting["pinned"]
	if len(p.Start) != 0 || !ok {
		t.Fatalf("plan %+v: it waits for its window", p)
	}
	if !w.EstimatedStart.Equal(opens) {
		t.Fatalf("estimated start %v, want the window's opening %v (units are free now, but not its booking's)", w.EstimatedStart, opens)
	}
	// Once the window is open the request is no longer held: it starts.
	s.Now, s.Queue[0].Blocked, s.Queue[0].NotBefore = opens, "", time.Time{}
	if p := Decide(s); !reflect.DeepEqual(p.Start, []string{"pinned"}) {
		t.Fatalf("in its window: start %v", p.Start)
	}
}

// A request that preempts is expected when its victims' grace ends: in the
// drain that chooses them (now + the grace) and in the drains after (their
// recorded stop time), not "now" nor "unknown". Requests behind it are
// estimated from there too.
func TestEstimateWhenPreemptionFreesTheUnits(t *testing.T) {
	grace := 2 * time.Minute
	run := []Running{
		{ID: "p", Pool: h100, Units: 4, Priority: 10, Preemptible: true, Started: t0},
		{ID: "i", Pool: h100, Units: 1, Priority: 100, Started: t0}, // no maximum runtime
	}
	now := t0.Add(time.Hour)
	s := Snapshot{Now: now, Free: map[Pool]int{h100: 3}, Running: run,
		Queue:  []Request{req("a", 1, 4, 100, 0)},
		Policy: Policy{Preempt: true, PreemptGrace: grace}}
	p := Decide(s)
	if !reflect.DeepEqual(p.Preempt, []string{"p"}) {
		t.Fatalf("preempt %v", p.Preempt)
	}
	if got := p.Waiting["a"].EstimatedStart; !got.Equal(now.Add(grace)) {
		t.Fatalf("estimate in the choosing drain %v, want the grace's end %v", got, now.Add(grace))
	}
	// A minute later p yields, told to stop at now+grace.
	s.Now = now.Add(time.Minute)
	s.Running[0].Yielding, s.Running[0].YieldsAt = true, now.Add(grace)
	p = Decide(s)
	if len(p.Preempt) != 0 {
		t.Fatalf("preempted again: %v", p.Preempt)
	}
	if got := p.Waiting["a"].EstimatedStart; !got.Equal(now.Add(grace)) {
		t.Fatalf("estimate while p yields %v, want %v", got, now.Add(grace))
	}
	if why := p.Waiting["a"].Reason; why != "4 × H100 80GB HBM3 needed; 3 free; preemptible work is yielding its GPUs" {
		t.Fatalf("reason while p yields: %q", why)
	}
	// A yielding run whose stop time is unknown counts as free, as before.
	s.Running[0].YieldsAt = time.Time{}
	if got := Decide(s).Waiting["a"].EstimatedStart; !got.Equal(s.Now) {
		t.Fatalf("estimate with an unknown stop time %v, want now", got)
	}
	// Without a grace the choosing drain cannot tell.
	s = Snapshot{Now: now, Free: map[Pool]int{h100: 3}, Queue: []Request{req("a", 1, 4, 100, 0)}, Policy: Policy{Preempt: true},
		Running: []Running{{ID: "p", Pool: h100, Units: 4, Priority: 10, Preemptible: true, Started: t0}, run[1]}}
	if got := Decide(s).Waiting["a"].EstimatedStart; !got.IsZero() {
		t.Fatalf("estimate without a grace %v, want unknown", got)
	}
}

// A run told to yield is let off when no waiting request needs it any more:
// the request left the queue, got other units, or only a request it could
// not have been preempted for is waiting; of two yielding runs only what
// the head still lacks is kept (the one that yields sooner).
func TestRescindYieldingRunsNobodyNeeds(t *testing.T) {
	now := t0.Add(time.Hour)
	p1 := Running{ID: "p1", Pool: h100, Units: 1, Priority: 10, Preemptible: true, Started: t0, Yielding: true, YieldsAt: now.Add(time.Minute)}
	p2 := Running{ID: "p2", Pool: h100, Units: 1, Priority: 10, Preemptible: true, Started: t0, Yielding: true, YieldsAt: now.Add(2 * time.Minute)}
	i := Running{ID: "i", Pool: h100, Units: 6, Priority: 100, Started: t0}
	snap := func(free int, q ...Request) Snapshot {
		return Snapshot{Now: now, Free: map[Pool]int{h100: free}, Running: []Running{p1, p2, i}, Queue: q,
			Policy: Policy{Preempt: true, PreemptGrace: 2 * time.Minute}}
	}
	for _, c := range []struct {
		name string
		s    Snapshot
		want []string
	}{
		{"the head still needs both", snap(0, req("a", 1, 2, 100, 0)), nil},
		{"the head needs one: the later one is let off", snap(0, req("a", 1, 1, 100, 0)), []string{"p2"}},
		{"a unit freed: the head needs one", snap(1, req("a", 1, 2, 100, 0)), []string{"p2"}},
		{"the request left the queue", snap(0), []string{"p1", "p2"}},
		{"it fits in what is free now", snap(2, req("a", 1, 2, 100, 0)), []string{"p1", "p2"}},
		{"only an equal priority waits", snap(0, req("b", 2, 2, 10, 0)), []string{"p1", "p2"}},
	} {
		p := Decide(c.s)
		if !reflect.DeepEqual(p.Rescind, c.want) {
			t.Errorf("%s: rescind %v, want %v", c.name, p.Rescind, c.want)
		}
		if len(p.Preempt) != 0 {
			t.Errorf("%s: preempted more: %v", c.name, p.Preempt)
		}
	}
	// Preemption off: nothing yields, nothing is rescinded.
	s := snap(0)
	s.Policy.Preempt = false
	if p := Decide(s); len(p.Rescind) != 0 {
		t.Errorf("preemption off: rescind %v", p.Rescind)
	}
}

// A request that only a drained GPU's return could make room for is told
// so (it said "8 needed; 7 free" and nothing of the drained one); one that
// a stop makes room for is not.
func TestWaitReasonNamesDrainedUnits(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	pool := PoolGPU("NVIDIA H100 80GB HBM3")
	s := Snapshot{Now: now, Free: map[Pool]int{pool: 7}, Drained: map[Pool]int{pool: 1},
		Queue: []Request{{ID: "big", User: 1, Pool: pool, Units: 8, Arrived: now}}}
	if w := Decide(s).Waiting["big"]; w.Reason != "8 × H100 80GB HBM3 needed; 7 free; 1 out of service (drained by an administrator)" {
		t.Errorf("reason %q", w.Reason)
	}
	// Held up by what runs, not by the drained ones: they are not named.
	s = Snapshot{Now: now, Free: map[Pool]int{}, Drained: map[Pool]int{pool: 7},
		Running: []Running{{ID: "r", User: 2, Pool: pool, Units: 1, Started: now.Add(-time.Hour)}},
		Queue:   []Request{{ID: "one", User: 1, Pool: pool, Units: 1, Arrived: now}}}
	if w := Decide(s).Waiting["one"]; w.Reason != "1 × H100 80GB HBM3 needed; 0 free" {
		t.Errorf("reason %q, want the drained GPUs left out (a stop makes room)", w.Reason)
	}
}

// Units an orphan container holds come back when the sweep removes it:
// the estimate counts them then, before a later run's end, and a request
// they make room for is not told to wait for a drained GPU.
func TestEstimateCountsOrphansAtTheirRemoval(t *testing.T) {
	now := t0.Add(time.Hour)
	sweep := now.Add(20 * time.Minute)
	s := Snapshot{Now: now, Free: map[Pool]int{}, Drained: map[Pool]int{h100: 1},
		Running: []Running{{ID: "r", User: 2, Pool: h100, Units: 1, Started: t0, EndsBy: now.Add(time.Hour)}},
		Orphans: []Orphan{{Pool: h100, Units: 1, RemoveAt: sweep}},
		Queue:   []Request{req("one", 1, 1, 0, 0)}}
	if w := Decide(s).Waiting["one"]; !w.EstimatedStart.Equal(sweep) {
		t.Errorf("one GPU: estimate %v, want the sweep %v", w.EstimatedStart, sweep)
	}
	s.Queue = []Request{req("pair", 1, 2, 0, 0)}
	if w := Decide(s).Waiting["pair"]; !w.EstimatedStart.Equal(now.Add(time.Hour)) || w.Reason != "2 × H100 80GB HBM3 needed; 0 free" {
		t.Errorf("two GPUs: estimate %v, reason %q; want the run's end %v, no drained GPU named", w.EstimatedStart, w.Reason, now.Add(time.Hour))
	}
}

// A request with no estimate says why when it is only runs without a
// known end (no maximum runtime) that hold what it needs; not when even
// they would not free enough (drained GPUs), nor when it waits on
// something else (Blocked), nor when it has an estimate.
func TestNoEstimateSaysHeldWithoutEnd(t *testing.T) {
	decide := func(free int, running []Running, blocked string) Wait {
		r := req("a", 1, 2, 100, 0)
		r.Blocked = blocked
		return Decide(Snapshot{Now: t0, Free: map[Pool]int{h100: free}, Queue: []Request{r}, Running: running, Policy: Policy{Backfill: true}}).Waiting["a"]
	}
	forever := []Running{{ID: "r1", Pool: h100, Units: 2}}
	if w := decide(0, forever, ""); !w.EstimatedStart.IsZero() || !w.HeldWithoutEnd {
		t.Errorf("held by a run with no end: estimate %v, held without end %v", w.EstimatedStart, w.HeldWithoutEnd)
	}
	if w := decide(0, []Running{{ID: "r1", Pool: h100, Units: 1}}, ""); w.HeldWithoutEnd {
		t.Errorf("1 of the 2 needed held, the rest out of service: said held without end")
	}
	if w := decide(0, forever, "quota"); w.HeldWithoutEnd {
		t.Errorf("blocked by its owner's quota: said held without end")
	}
	if w := decide(0, []Running{{ID: "r1", Pool: h100, Units: 2, EndsBy: t0.Add(time.Hour)}}, ""); w.EstimatedStart.IsZero() || w.HeldWithoutEnd {
		t.Errorf("a known end: estimate %v, held without end %v", w.EstimatedStart, w.HeldWithoutEnd)
	}
}

// Every waiting request with no estimate names why as a stable code (the
// API's estimated_start_reason_code), and one with an estimate names none:
// runs with no end, drained GPUs it cannot do without, what blocks it (the
// caller's code), and requests ahead that need more than all releases.
func TestNoEstimateNamesACode(t *testing.T) {
	forever := []Running{{ID: "r1", Pool: h100, Units: 2}}
	for _, c := range []struct {
		name    string
		free    int
		drained int
		running []Running
		queue   []Request
		want    string
	}{
		{"held by a run with no end", 0, 0, forever, []Request{req("a", 1, 2, 100, 0)}, NoEstimateHeldWithoutEnd},
		{"drained GPUs needed", 0, 1, []Running{{ID: "r1", Pool: h100, Units: 1, EndsBy: t0.Add(time.Hour)}}, []Request{req("a", 1, 2, 100, 0)}, NoEstimateOutOfService},
		{"blocked by the owner's quota", 2, 0, nil, []Request{func() Request {
			r := req("a", 1, 2, 100, 0)
			r.Blocked, r.BlockedCode = "quota", NoEstimateOwnerQuota
			return r
		}()}, NoEstimateOwnerQuota},
		{"blocked by the server's layout", 2, 0, nil, []Request{func() Request {
			r := req("a", 1, 2, 100, 0)
			r.Blocked, r.BlockedCode = "layout", NoEstimateServerLayout
			return r
		}()}, NoEstimateServerLayout},
		{"requests ahead need every GPU", 0, 0, []Running{{ID: "r1", Pool: h100, Units: 2, EndsBy: t0.Add(time.Hour)}},
			[]Request{req("first", 2, 2, 100, 0), req("a", 1, 2, 100, time.Second)}, NoEstimateQueueAhead},
		{"a known end", 0, 0, []Running{{ID: "r1", Pool: h100, Units: 2, EndsBy: t0.Add(time.Hour)}}, []Request{req("a", 1, 2, 100, 0)}, ""},
	} {
		s := Snapshot{Now: t0, Free: map[Pool]int{h100: c.free}, Drained: map[Pool]int{h100: c.drained}, Queue: c.queue, Running: c.running, Policy: Policy{Backfill: true}}
		w, ok := Decide(s).Waiting["a"]
		if !ok {
			t.Errorf("%s: not waiting", c.name)
			continue
		}
		if w.NoEstimate != c.want || (c.want == "") == w.EstimatedStart.IsZero() {
			t.Errorf("%s: code %q, estimate %v; want %q", c.name, w.NoEstimate, w.EstimatedStart, c.want)
		}
	}
}
