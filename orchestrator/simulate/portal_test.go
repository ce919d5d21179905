package simulate

import (
	"context"
	"strings"
	"testing"
	"time"
)

// starts lists each job's start times from a result's log.
func starts(r *Result) map[string][]time.Duration {
	out := map[string][]time.Duration{}
	for _, e := range r.Log {
		if e.Kind == EvStart {
			out[e.Job] = append(out[e.Job], e.At.Sub(Base))
		}
	}
	return out
}

// The portal mode on the shipped lab day (issue 12 §5): the trace replayed
// against the real Manager, queue, SQLite file and in-memory runtime. The
// sharing policy reaches a higher utilisation than today's behaviour, every
// figure agrees with the portal's own records (usage intervals, workbench
// histories), and exclusive-reject — each launch decided alone — refuses
// exactly what the pure scheduler refuses.
func TestSimulatePortalLabDaySharingBeatsExclusive(t *testing.T) {
	if testing.Short() {
		t.Skip("replays a day through the portal (about 20 s)")
	}
	tr := labDay(t)
	cfg := DefaultConfig()
	ctx := context.Background()
	excl, err := RunPortal(ctx, tr, ExclusiveReject, cfg)
	if err != nil {
		t.Fatal(err)
	}
	shar, err := RunPortal(ctx, tr, FairPreemptSharing, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if shar.Utilisation() <= excl.Utilisation() || shar.ServedGPUHours <= excl.ServedGPUHours {
		t.Fatalf("sharing %.3f held / %.1f served, exclusive %.3f / %.1f", shar.Utilisation(), shar.ServedGPUHours, excl.Utilisation(), excl.ServedGPUHours)
	}
	for _, r := range []*Result{excl, shar} {
		busy := BusySliceSeconds(r.Log, r.WeightPerUnit, r.Window)
		if r.Portal.BusyWeightSeconds != busy || r.Portal.Preempted != r.Preempted || r.Portal.Refused+r.Portal.Expired != r.Rejected {
			t.Fatalf("%s: report %d busy, %d preempted, %d rejected; portal %+v", r.Policy, busy, r.Preempted, r.Rejected, r.Portal)
		}
		if got := float64(busy) / float64(r.WeightPerGPU) / 3600; got != r.BusyGPUHours || r.Unfinished != 0 {
			t.Fatalf("%s: busy %.3f GPU-h from the log, %.3f reported; %d unfinished", r.Policy, got, r.BusyGPUHours, r.Unfinished)
		}
	}
	if shar.Preempted == 0 || shar.Rejected != 0 || excl.Preempted != 0 {
		t.Fatalf("sharing preempted %d rejected %d; exclusive preempted %d", shar.Preempted, shar.Rejected, excl.Preempted)
	}
	pure, err := Run(tr, ExclusiveReject, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if pure.Rejected != excl.Rejected || pure.Portal.Intervals != 0 || excl.Portal.Intervals != len(tr)-excl.Rejected {
		t.Fatalf("exclusive-reject: pure scheduler rejects %d, the portal %d (%d runs metered)", pure.Rejected, excl.Rejected, excl.Portal.Intervals)
	}
}

// A small day worked by hand, in the portal, with every kind of unit: GPU 0
// split into two MIG 3g.40gb instances, GPU 2 shared in two slices, GPU 1
// whole; a slice booking, a preemption with its grace and resume, and a
// request that can never be placed expiring after the maximum wait.
func TestSimulatePortalMIGSlicesReservationExpiry(t *testing.T) {
	tr, err := ParseTrace(strings.NewReader(`arrival_s,user,gpus,duration_s,priority,preemptible,checkpoint_s
0,u1,0.4,3600,interactive,false,0
0,u2,0.4,3600,interactive,false,0
0,u3,0.4,3600,interactive,false,0
0,u4,0.5,3600,interactive,false,0
0,u5,0.5,10800,interactive,false,0
0,u6,0.5,3600,interactive,false,0
2400,u8,0.5,1800,interactive,false,0
0,u7,1,10800,preemptible,true,1800
60,u9,2,3600,batch,false,0
600,u10,1,3600,interactive,false,0
`))
	if err != nil {
		t.Fatal(err)
	}
	mig, err := ParseMIG([]string{"0:3g.40gb"})
	if err != nil || len(mig) != 1 || len(mig[0].Profiles) != 2 {
		t.Fatalf("--mig 0:3g.40gb: %+v (%v)", mig, err)
	}
	cfg := DefaultConfig()
	cfg.GPUs, cfg.SharedGPUs, cfg.SlicesPerGPU, cfg.MIG = 3, 1, 2, mig
	cfg.MaxWait, cfg.Window = 150*time.Minute, 6*time.Hour
	cfg.Bookings = []Booking{{User: "u8", Kind: "slice", Units: 1, Start: 30 * time.Minute, End: 2 * time.Hour}}
	r, err := RunPortal(context.Background(), tr, FairPreemptSharing, cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := time.Hour
	m := time.Minute
	want := map[string][]time.Duration{
		"j0001": {0}, "j0002": {0}, "j0003": {h}, // MIG: two instances, the third waits for one
		"j0004": {0}, "j0005": {0}, // both slices
		"j0007": {h},     // u8's booking: the slice freed at 1 h is hers, ahead of u6 queued since 0
		"j0006": {2 * h}, // u6: the slice freed at 1 h 30 is still booked; the booking ends at 2 h
		// u7's preemptible run yields to u10 after the 2-minute grace and
		// resumes once u9's request (2 GPUs of a pool of 1, queued at
		// 1 min) has expired after the maximum wait of 2 h 30.
		"j0008": {0, 2*h + 31*m}, "j0010": {12 * m},
	}
	got := starts(r)
	for id, w := range want {
		if len(got[id]) != len(w) {
			t.Errorf("%s started at %v, want %v", id, got[id], w)
			continue
		}
		for i := range w {
			if got[id][i].Round(time.Second) != w[i] { // equal arrivals join a microsecond apart
				t.Errorf("%s started at %v, want %v", id, got[id], w)
			}
		}
	}
	if len(got["j0009"]) != 0 {
		t.Errorf("u9's 2-GPU request started at %v on a pool of one", got["j0009"])
	}
	lost := 12 * m
	if r.Preempted != 1 || r.Rejected != 1 || r.Portal.Expired != 1 || r.Portal.Preempted != 1 || r.Unfinished != 0 ||
		r.LostGPUHours-lost.Hours() > 1e-6 || lost.Hours()-r.LostGPUHours > 1e-6 {
		t.Fatalf("preempted %d rejected %d lost %.3f GPU-h unfinished %d; portal %+v", r.Preempted, r.Rejected, r.LostGPUHours, r.Unfinished, r.Portal)
	}
	// Busy GPU-hours by hand: a MIG 3g instance is 3/7 of a GPU, a slice
	// half of one (2 slices).
	busy := 3*(3.0/7) + // three 1 h MIG runs
		0.5*(1+3+1+0.5) + // slices: 1 h, 3 h, u6 1 h, u8 30 min
		(12.0/60 + 3 + 1) // u7 12 min + 3 h, u10 1 h
	if d := r.BusyGPUHours - busy; d > 1e-9 || d < -1e-9 {
		t.Fatalf("busy %.6f GPU-h, by hand %.6f", r.BusyGPUHours, busy)
	}
	if r.Capacity["mig|3g.40gb|NVIDIA H100 80GB HBM3"] != 2 || r.Capacity["slice|NVIDIA H100 80GB HBM3"] != 2 || r.Capacity["gpu|NVIDIA H100 80GB HBM3"] != 1 {
		t.Fatalf("capacity %v", r.Capacity)
	}
}

// Equal arrivals keep the trace's order in the portal (they join the queue
// a microsecond apart), so a replay is the same every time, and under
// queue-fifo the portal does exactly what the pure scheduler does.
func TestSimulatePortalDeterministicAndFIFOMatchesPure(t *testing.T) {
	var b strings.Builder
	b.WriteString("arrival_s,user,gpus,duration_s,priority,preemptible,checkpoint_s\n")
	for i := range 12 {
		b.WriteString([]string{"0", "0", "0", "0", "600", "600", "600", "600", "1200", "1200", "1200", "1200"}[i])
		b.WriteString(",u" + string(rune('a'+i%5)) + "," + []string{"1", "0.5", "2", "1"}[i%4] + "," + []string{"1800", "3600", "900", "2700"}[i%4] + ",interactive,false,0\n")
	}
	tr, err := ParseTrace(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.GPUs, cfg.SharedGPUs = 3, 0
	table := func(r *Result) string {
		var out strings.Builder
		if err := WriteTable(&out, []*Result{r}); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	ctx := context.Background()
	a, err := RunPortal(ctx, tr, QueueFIFO, cfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := RunPortal(ctx, tr, QueueFIFO, cfg)
	if err != nil {
		t.Fatal(err)
	}
	pure, err := Run(tr, QueueFIFO, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if table(a) != table(again) {
		t.Fatalf("two replays differ:\n%s\n%s", table(a), table(again))
	}
	// The same starts to the second (the portal's equal arrivals are a
	// microsecond apart), so the same waits and utilisation.
	st, ps := starts(a), starts(pure)
	for id, w := range ps {
		if len(st[id]) != 1 || st[id][0].Round(time.Second) != w[0] {
			t.Errorf("%s: portal starts %v, pure %v", id, st[id], w)
		}
	}
	for _, cl := range ClassNames {
		for _, q := range []float64{50, 95} {
			if d := Percentile(a.Waits[cl], q) - Percentile(pure.Waits[cl], q); d > time.Millisecond || d < -time.Millisecond {
				t.Errorf("%s p%.0f: portal %s, pure %s", cl, q, Percentile(a.Waits[cl], q), Percentile(pure.Waits[cl], q))
			}
		}
	}
	if d := a.Utilisation() - pure.Utilisation(); d > 1e-3 || d < -1e-3 || a.Rejected != pure.Rejected {
		t.Fatalf("utilisation portal %.4f pure %.4f; rejected %d %d", a.Utilisation(), pure.Utilisation(), a.Rejected, pure.Rejected)
	}
}
