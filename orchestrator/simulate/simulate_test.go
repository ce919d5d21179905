package simulate

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"workbench/internal/timeorder"
	"workbench/orchestrator/scheduler"
)

func labDay(t *testing.T) Trace {
	t.Helper()
	f, err := os.Open("testdata/labday.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := ParseTrace(f)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func runAll(t *testing.T, tr Trace, cfg Config) []*Result {
	t.Helper()
	var out []*Result
	for _, p := range Policies {
		r, err := Run(tr, p, cfg)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, r)
	}
	return out
}

// The shipped trace is the seeded generator's output: regenerate it with
// `workbench simulate --synthetic --seed 1 --write-trace FILE`.
func TestSimulateShippedTraceIsSyntheticSeed1(t *testing.T) {
	want, err := os.ReadFile("testdata/labday.csv")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := WriteCSV(&got, Synthetic(1)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Fatal("Synthetic(1) differs from testdata/labday.csv")
	}
	if !slices.Equal(labDay(t), Synthetic(1)) {
		t.Fatal("parsing labday.csv does not give Synthetic(1) back")
	}
	if slices.Equal(Synthetic(1), Synthetic(2)) {
		t.Fatal("the seed changes nothing")
	}
}

func TestSimulateSharingBeatsExclusiveOnLabDay(t *testing.T) {
	tr := labDay(t)
	cfg := DefaultConfig()
	excl, err := Run(tr, ExclusiveReject, cfg)
	if err != nil {
		t.Fatal(err)
	}
	share, err := Run(tr, FairPreemptSharing, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if share.Utilisation() <= excl.Utilisation() {
		t.Errorf("utilisation: fair+preempt+sharing %.3f, exclusive-reject %.3f", share.Utilisation(), excl.Utilisation())
	}
	if share.ServedGPUHours <= excl.ServedGPUHours {
		t.Errorf("served: fair+preempt+sharing %.1f, exclusive-reject %.1f GPU-h", share.ServedGPUHours, excl.ServedGPUHours)
	}
	if excl.Rejected == 0 || share.Rejected != 0 {
		t.Errorf("rejected: exclusive %d (want some), sharing %d (want none)", excl.Rejected, share.Rejected)
	}
	if share.Preempted == 0 {
		t.Error("the lab day preempts nothing under fair+preempt+sharing")
	}
}

// The simulator cannot report what the scheduler did not do: every start,
// refusal and preemption in the log is backed by a Decide plan, and the
// reported numbers are recomputed here from the log alone.
func TestSimulateNumbersMatchSchedulerDecisions(t *testing.T) {
	tr := labDay(t)
	jobs := map[string]Job{}
	for _, j := range tr {
		jobs[j.ID] = j
	}
	for _, r := range runAll(t, tr, DefaultConfig()) {
		t.Run(string(r.Policy), func(t *testing.T) {
			decision := func(e Event) Decision {
				t.Helper()
				if e.Decision < 0 || e.Decision >= len(r.Decisions) {
					t.Fatalf("%s %s at %s: no decision", e.Kind, e.Job, e.At)
				}
				d := r.Decisions[e.Decision]
				if !d.At.Equal(e.At) {
					t.Fatalf("%s %s at %s: decision made at %s", e.Kind, e.Job, e.At, d.At)
				}
				return d
			}
			held := map[scheduler.Pool]int{}
			startedAt := map[string]time.Time{}
			noticed := map[string]bool{}
			var busy int64
			var lost float64
			rejected, stopped, finished := 0, 0, map[string]int{}
			end := Base.Add(r.Window)
			for _, e := range r.Log {
				switch e.Kind {
				case EvStart:
					d := decision(e)
					if !slices.Contains(d.Plan.Start, e.Job) {
						t.Fatalf("%s started at %s without the plan starting it", e.Job, e.At)
					}
					if _, twice := startedAt[e.Job]; twice {
						t.Fatalf("%s started while running", e.Job)
					}
					startedAt[e.Job] = e.At
					held[e.Pool] += e.Units
					if held[e.Pool] > r.Capacity[e.Pool] {
						t.Fatalf("at %s %d units of %s held, %d exist", e.At, held[e.Pool], e.Pool, r.Capacity[e.Pool])
					}
				case EvReject:
					if r.Policy != ExclusiveReject {
						t.Fatalf("%s rejects", r.Policy)
					}
					d := decision(e)
					if len(d.Snapshot.Queue) != 1 || d.Snapshot.Queue[0].ID != e.Job || slices.Contains(d.Plan.Start, e.Job) {
						t.Fatalf("%s refused without a plan that declined it alone", e.Job)
					}
					rejected++
				case EvNotice:
					d := decision(e)
					if !slices.Contains(d.Plan.Preempt, e.Job) || !jobs[e.Job].Preemptible {
						t.Fatalf("%s told to yield without the plan choosing it, or not preemptible", e.Job)
					}
					noticed[e.Job] = true
				case EvFinish, EvStopped:
					st, ok := startedAt[e.Job]
					if !ok {
						t.Fatalf("%s ends without running", e.Job)
					}
					delete(startedAt, e.Job)
					held[e.Pool] -= e.Units
					if b := timeorder.Min(e.At, end); b.After(st) {
						busy += int64(b.Sub(st)/time.Second) * int64(e.Units*r.WeightPerUnit[e.Pool])
					}
					if e.Kind == EvFinish {
						finished[e.Job]++
						continue
					}
					if !noticed[e.Job] {
						t.Fatalf("%s preempted without a notice", e.Job)
					}
					if got := e.At.Sub(decisionAt(r, e.Decision)); got != r.Config.Grace {
						t.Fatalf("%s stopped %s after its notice, grace is %s", e.Job, got, r.Config.Grace)
					}
					delete(noticed, e.Job)
					stopped++
					lost += float64(e.Units*r.WeightPerUnit[e.Pool]) / float64(r.Config.SlicesPerGPU) * e.Lost.Hours()
				}
			}
			S := float64(r.Config.SlicesPerGPU)
			if want := float64(busy) / S / 3600; !near(r.BusyGPUHours, want) {
				t.Errorf("busy GPU-h reported %.4f, from the log %.4f", r.BusyGPUHours, want)
			}
			if want := float64(r.Config.GPUs) * r.Window.Hours(); !near(r.AvailableGPUHours, want) {
				t.Errorf("available GPU-h %.4f, want %.4f", r.AvailableGPUHours, want)
			}
			if rejected != r.Rejected || stopped != r.Preempted || !near(lost, r.LostGPUHours) {
				t.Errorf("rejected %d/%d, preempted %d/%d, lost %.3f/%.3f (log/reported)", rejected, r.Rejected, stopped, r.Preempted, lost, r.LostGPUHours)
			}
			if r.Unfinished != 0 || len(startedAt) != 0 {
				t.Errorf("%d jobs unfinished, %d still running at the end", r.Unfinished, len(startedAt))
			}
			for id, j := range jobs {
				if finished[id] > 1 {
					t.Errorf("%s finished %d times", id, finished[id])
				}
				if finished[id] == 0 && r.Policy != ExclusiveReject {
					t.Errorf("%s (%s) never finished", id, j.Priority)
				}
			}
			if r.Policy != ExclusiveReject && rejected > 0 {
				t.Errorf("%s rejected %d", r.Policy, rejected)
			}
			if r.Policy != FairPreemptSharing && stopped > 0 {
				t.Errorf("%s preempted %d", r.Policy, stopped)
			}
			// Every start a plan made was carried out.
			starts := 0
			for _, d := range r.Decisions {
				starts += len(d.Plan.Start)
			}
			if n := countKind(r.Log, EvStart); n != starts {
				t.Errorf("plans started %d, the log shows %d starts", starts, n)
			}
		})
	}
}

func decisionAt(r *Result, i int) time.Time { return r.Decisions[i].At }

func countKind(log []Event, k EventKind) int {
	n := 0
	for _, e := range log {
		if e.Kind == k {
			n++
		}
	}
	return n
}

func near(a, b float64) bool { d := a - b; return d < 1e-6 && d > -1e-6 }

// A hand-worked day on one GPU: the numbers are exact.
func TestSimulateSmallTraceExactNumbers(t *testing.T) {
	csv := `arrival_s,user,gpus,duration_s,priority,preemptible,checkpoint_s
0,ann,1,10800,preemptible,true,1800
4200,bob,1,3600,interactive,false,0
4500,cat,1,600,batch,false,0
`
	tr, err := ParseTrace(strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.GPUs, cfg.SharedGPUs = 1, 0
	cfg.RatePerGPUHour = 3_600_000_000 // 1 000 000 micro per GPU-second
	cfg.Window = 10 * time.Hour

	excl, err := Run(tr, ExclusiveReject, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if excl.Rejected != 2 || excl.BusyGPUHours != 3 || excl.CostMicro["ann"] != 10800*1_000_000 || excl.CostMicro["bob"] != 0 {
		t.Errorf("exclusive-reject: rejected %d, busy %.2f, cost %v", excl.Rejected, excl.BusyGPUHours, excl.CostMicro)
	}

	fifo, err := Run(tr, QueueFIFO, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// ann 0–3h, bob waits 3h-70m = 110 min, cat 3h-75m+1h = 165 min.
	if w := fifo.Waits["interactive"]; len(w) != 1 || w[0] != 110*time.Minute {
		t.Errorf("fifo interactive waits %v", w)
	}
	if w := fifo.Waits["batch"]; len(w) != 1 || w[0] != 165*time.Minute {
		t.Errorf("fifo batch waits %v", w)
	}

	pre, err := Run(tr, FairPreemptSharing, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// bob arrives at 70 min: ann is told to yield, stops after the 2 min
	// grace at 72 min having saved 60 min (checkpoint every 30): 12 min
	// lost. bob runs 72–132 min, then cat (batch, higher than ann) 132–142,
	// then ann resumes for the 120 min left: 142–262.
	if pre.Preempted != 1 || pre.LostGPUHours != 0.2 {
		t.Errorf("preempted %d, lost %.3f GPU-h, want 1 and 0.2", pre.Preempted, pre.LostGPUHours)
	}
	if w := pre.Waits["interactive"]; len(w) != 1 || w[0] != 2*time.Minute {
		t.Errorf("interactive waits %v, want the grace", w)
	}
	if w := pre.Waits["preemptible"]; len(w) != 1 || w[0] != 70*time.Minute {
		t.Errorf("preemptible waits %v, want 70 min back in the queue", w)
	}
	if pre.End != 262*time.Minute {
		t.Errorf("ended at %s, want 4h22m", pre.End)
	}
	if want := int64(72+120) * 60 * 1_000_000; pre.CostMicro["ann"] != want {
		t.Errorf("ann pays %d, want %d (billed to its exit, lost work included)", pre.CostMicro["ann"], want)
	}
}

func TestSimulateSharingPutsFractionsOnSlices(t *testing.T) {
	var tr Trace
	for i := range 4 {
		tr = append(tr, Job{ID: string(rune('a' + i)), User: "u", GPUs: 0.25, Duration: time.Hour, Priority: "interactive"})
	}
	cfg := DefaultConfig()
	cfg.GPUs, cfg.SharedGPUs = 2, 1
	share, err := Run(tr, FairPreemptSharing, cfg)
	if err != nil {
		t.Fatal(err)
	}
	fair, err := Run(tr, QueueFair, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Four quarter-GPU sessions: on one shared GPU at once (1 GPU-h held of
	// 2 available), or two at a time on whole GPUs (2 h, 4 GPU-h held).
	if share.End != time.Hour || !near(share.BusyGPUHours, 1) || !near(share.Utilisation(), 0.5) {
		t.Errorf("sharing: end %s, busy %.2f", share.End, share.BusyGPUHours)
	}
	if fair.End != 2*time.Hour || !near(fair.BusyGPUHours, 2) {
		t.Errorf("whole GPUs: end %s, busy %.2f (window is 1 h)", fair.End, fair.BusyGPUHours)
	}
}

func TestSimulateDeterministicOutput(t *testing.T) {
	out := func() (string, string) {
		rs := runAll(t, Synthetic(7), DefaultConfig())
		var tab, svg bytes.Buffer
		if err := WriteTable(&tab, rs); err != nil {
			t.Fatal(err)
		}
		if err := WriteSVG(&svg, rs); err != nil {
			t.Fatal(err)
		}
		return tab.String(), svg.String()
	}
	t1, s1 := out()
	t2, s2 := out()
	if t1 != t2 || s1 != s2 {
		t.Fatal("two runs on the same seed differ")
	}
	for _, p := range Policies {
		if !strings.Contains(t1, string(p)) || !strings.Contains(s1, string(p)) {
			t.Errorf("%s missing from the table or the chart", p)
		}
	}
}

func TestSimulateBadTraceIsAClearError(t *testing.T) {
	head := "arrival_s,user,gpus,duration_s,priority,preemptible,checkpoint_s\n"
	cases := map[string]struct{ in, want string }{
		"empty":          {"", "trace is empty"},
		"header":         {"arrival,user\n1,2\n", "header"},
		"no jobs":        {head, "no jobs"},
		"not a number":   {head + "x,u,1,60,batch,false,0\n", "line 2: arrival_s: \"x\" is not a number"},
		"negative":       {head + "0,u,1,-5,batch,false,0\n", "line 2: duration_s"},
		"1.5 GPUs":       {head + "0,u,1,60,batch,false,0\n0,u,1.5,60,batch,false,0\n", "line 3: gpus: 1.5"},
		"zero GPUs":      {head + "0,u,0,60,batch,false,0\n", "gpus: 0 must be more than 0"},
		"unknown class":  {head + "0,u,1,60,urgent,false,0\n", `priority: "urgent" is not one of`},
		"preemptible":    {head + "0,u,1,60,batch,maybe,0\n", "preemptible: \"maybe\""},
		"no user":        {head + "0,,1,60,batch,false,0\n", "user: empty"},
		"fields":         {head + "0,u,1\n", "wrong number of fields"},
		"json field":     {`[{"arrival_s":0,"user":"u","gpus":1,"duration_s":60,"priority":"batch","colour":1}]`, "unknown field \"colour\""},
		"json value":     {`[{"arrival_s":0,"user":"u","gpus":1,"duration_s":0,"priority":"batch"}]`, "trace element 0: duration_s"},
		"json not array": {`[1`, "trace JSON"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseTrace(strings.NewReader(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
	good := `[{"arrival_s":60,"user":"u","gpus":0.25,"duration_s":600,"priority":"interactive","preemptible":false,"checkpoint_s":0}]`
	tr, err := ParseTrace(strings.NewReader(good))
	if err != nil || len(tr) != 1 || tr[0].Arrival != time.Minute || !tr[0].Fractional() {
		t.Fatalf("JSON trace: %v %+v", err, tr)
	}
	if _, err := Run(tr, "round-robin", DefaultConfig()); err == nil || !strings.Contains(err.Error(), "unknown policy") {
		t.Fatalf("unknown policy: %v", err)
	}
	cfg := DefaultConfig()
	cfg.SharedGPUs = cfg.GPUs
	if _, err := Run(tr, FairPreemptSharing, cfg); err == nil || !strings.Contains(err.Error(), "--shared-gpus") {
		t.Fatalf("all GPUs shared: %v", err)
	}
}

// BenchmarkSimulateLabDay runs the four policies on the shipped trace.
func BenchmarkSimulateLabDay(b *testing.B) {
	f, err := os.Open("testdata/labday.csv")
	if err != nil {
		b.Fatal(err)
	}
	tr, err := ParseTrace(f)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		for _, p := range Policies {
			if _, err := Run(tr, p, DefaultConfig()); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// Both engines: a preemptible run told to yield is let off when the launch
// it yielded for gets another GPU within the grace. Two GPUs: ann's
// preemptible run and dan's 60 s session hold them; bob arrives at 30 s,
// ann is told to yield (grace 2 min); dan's GPU frees at 60 s and bob
// starts there: ann is never stopped.
func TestSimulateRescindsAPreemptionNobodyNeeds(t *testing.T) {
	csv := `arrival_s,user,gpus,duration_s,priority,preemptible,checkpoint_s
0,ann,1,36000,preemptible,true,1800
0,dan,1,60,interactive,false,0
30,bob,1,600,interactive,false,0
`
	tr, err := ParseTrace(strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.GPUs, cfg.SharedGPUs = 2, 0
	cfg.Window = 11 * time.Hour
	pure, err := Run(tr, FairPreemptSharing, cfg)
	if err != nil {
		t.Fatal(err)
	}
	portal, err := RunPortal(context.Background(), tr, FairPreemptSharing, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if countKind(pure.Log, EvNotice) != 1 { // (the portal engine logs no notices)
		t.Errorf("%d notices, want ann told once", countKind(pure.Log, EvNotice))
	}
	for name, r := range map[string]*Result{"scheduler": pure, "portal": portal} {
		if r.Preempted != 0 || r.LostGPUHours != 0 {
			t.Errorf("%s: preempted %d, lost %.3f GPU-h: ann was stopped for nothing", name, r.Preempted, r.LostGPUHours)
		}
		if w := r.Waits["interactive"]; len(w) != 2 || (w[1]+w[0]).Round(time.Second) != 30*time.Second {
			t.Errorf("%s: interactive waits %v, want bob's 30 s", name, w)
		}
	}
}
