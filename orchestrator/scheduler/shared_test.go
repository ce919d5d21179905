package scheduler

import (
	"reflect"
	"slices"
	"testing"
	"time"
)

// A whole-GPU request that nothing of its own pool can make room for takes
// a shared GPU whole by preempting every slice holder of it — only when
// all of them are preemptible and of lower rank, the fewest victims first,
// never a GPU with a free slice or with booked slices — and, once they have
// gone, starts on it without asking for more victims.
func TestChooseSharedTakesAWholeSharedGPU(t *testing.T) {
	slice := PoolSlice("NVIDIA H100 80GB HBM3")
	run := func(id string, prio int, preemptible bool, started time.Duration) Running {
		return Running{ID: id, User: 9, Pool: slice, Units: 1, Priority: prio, Preemptible: preemptible, Started: t0.Add(started)}
	}
	shared := func(uuid string, n int, holders ...string) SharedGPU {
		return SharedGPU{UUID: uuid, Pool: h100, SlicePool: slice, Slices: n, Holders: holders}
	}
	want := req("interactive", 1, 1, 100, time.Hour)
	base := Snapshot{Now: t0.Add(2 * time.Hour), Free: map[Pool]int{h100: 0, slice: 0}, Queue: []Request{want},
		Policy: Policy{Preempt: true},
		Running: []Running{
			{ID: "whole", User: 2, Pool: h100, Units: 1, Priority: 100, Started: t0}, // not preemptible
			run("a1", 10, true, time.Minute), run("a2", 10, true, 2*time.Minute),
			run("b1", 10, true, 3*time.Minute),
			run("c1", 10, true, 4*time.Minute),
			run("d1", 10, false, 5*time.Minute), run("d2", 10, true, 6*time.Minute),
			run("e1", 100, true, 7*time.Minute),
		}}
	cases := []struct {
		name     string
		shared   []SharedGPU
		res      []Reservation
		preempt  []string
		claimGPU []string
	}{
		{"both slice holders of the only shared GPU", []SharedGPU{shared("A", 2, "a1", "a2")}, nil, []string{"a1", "a2"}, []string{"A"}},
		{"fewest victims first", []SharedGPU{shared("A", 2, "a1", "a2"), shared("B", 1, "b1")}, nil, []string{"b1"}, []string{"B"}},
		{"equal victims: the newest", []SharedGPU{shared("B", 1, "b1"), shared("C", 1, "c1")}, nil, []string{"c1"}, []string{"C"}},
		{"never non-preemptible work", []SharedGPU{shared("D", 2, "d1", "d2")}, nil, nil, nil},
		{"never work of the same rank", []SharedGPU{shared("E", 1, "e1")}, nil, nil, nil},
		{"not with a free slice", []SharedGPU{shared("A", 3, "a1", "a2")}, nil, nil, nil},
		{"not an idle shared GPU", []SharedGPU{shared("F", 2)}, nil, nil, nil},
		{"not while its slices are booked", []SharedGPU{shared("A", 2, "a1", "a2")},
			[]Reservation{{ID: 1, User: 5, Pool: slice, Units: 1, Start: t0, End: t0.Add(5 * time.Hour)}}, nil, nil},
		{"not one claimed by someone else", []SharedGPU{{UUID: "A", Pool: h100, SlicePool: slice, Slices: 2, Holders: []string{"a1", "a2"}, ClaimedBy: "other"}}, nil, nil, nil},
	}
	for _, c := range cases {
		s := base
		s.Shared, s.Reservations = c.shared, c.res
		p := Decide(s)
		got := append([]string(nil), p.Preempt...)
		slices.Sort(got)
		if !reflect.DeepEqual(got, c.preempt) && !(len(got) == 0 && len(c.preempt) == 0) {
			t.Errorf("%s: preempt %v, want %v", c.name, p.Preempt, c.preempt)
		}
		if !reflect.DeepEqual(p.Claim["interactive"], c.claimGPU) {
			t.Errorf("%s: claim %v, want %v", c.name, p.Claim, c.claimGPU)
		}
		if len(p.Start) != 0 {
			t.Errorf("%s: started %v with no GPU free", c.name, p.Start)
		}
	}

	// Two GPUs wanted: the one preemptible whole-GPU run is not enough
	// alone, so it yields too, with the shared GPU for the rest.
	s2 := base
	s2.Shared = []SharedGPU{shared("A", 2, "a1", "a2")}
	s2.Running = append(append([]Running(nil), base.Running...), Running{ID: "spot-whole", User: 7, Pool: h100, Units: 1, Priority: 10, Preemptible: true, Started: t0})
	s2.Queue = []Request{req("two", 1, 2, 100, time.Hour)}
	p2 := Decide(s2)
	got2 := append([]string(nil), p2.Preempt...)
	slices.Sort(got2)
	if !reflect.DeepEqual(got2, []string{"a1", "a2", "spot-whole"}) || !reflect.DeepEqual(p2.Claim["two"], []string{"A"}) {
		t.Fatalf("two GPUs: preempt %v claim %v", p2.Preempt, p2.Claim)
	}
	// Without the shared GPU nobody is preempted for nothing.
	s2.Shared = nil
	if p := Decide(s2); len(p.Preempt) != 0 {
		t.Fatalf("two GPUs, one victim: preempt %v", p.Preempt)
	}

	// Claimed, its holders still yielding: no more victims, still waits.
	s := base
	s.Shared = []SharedGPU{{UUID: "A", Pool: h100, SlicePool: slice, Slices: 2, Holders: []string{"a1", "a2"}, ClaimedBy: "interactive"},
		shared("B", 1, "b1")}
	s.Running = append([]Running(nil), base.Running...)
	for i := range s.Running {
		if s.Running[i].ID == "a1" || s.Running[i].ID == "a2" {
			s.Running[i].Yielding = true
		}
	}
	claimed := want
	claimed.Claimed = 1
	s.Queue = []Request{claimed}
	if p := Decide(s); len(p.Preempt) != 0 || len(p.Start) != 0 || len(p.Claim) != 0 {
		t.Fatalf("while its claim yields: %+v", p)
	}
	// They have gone: it starts on the lent GPU, taking nothing of the pool.
	claimed.Lent = 1
	s.Running, s.Shared = base.Running[:1], nil
	s.Queue = []Request{claimed, req("next", 3, 1, 100, 2*time.Hour)}
	s.Free = map[Pool]int{h100: 1}
	if p := Decide(s); !reflect.DeepEqual(p.Start, []string{"interactive", "next"}) {
		t.Fatalf("once lent: start %v, want both (the lent GPU and the free one)", p.Start)
	}
}
