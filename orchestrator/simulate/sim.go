package simulate

import (
	"container/heap"
	"fmt"
	"slices"
	"time"

	"workbench/internal/timeorder"
	"workbench/orchestrator/gpu"
	"workbench/orchestrator/scheduler"
)

// Policy is a way of running the GPUs.
type Policy string

// The policies of issue 12 §5.
const (
	// ExclusiveReject is the portal before the queue: whole GPUs, a
	// request that does not fit now is refused.
	ExclusiveReject Policy = "exclusive-reject"
	// QueueFIFO queues in arrival order (no priorities, no fair share,
	// no backfill).
	QueueFIFO Policy = "queue-fifo"
	// QueueFair is the scheduler as configured by default: priority,
	// fair share, backfill; no preemption.
	QueueFair Policy = "queue-fair"
	// FairPreemptSharing adds preemption of preemptible runs and shared
	// GPUs: fractional requests take one slice of a GPU marked shared.
	FairPreemptSharing Policy = "fair+preempt+sharing"
)

// Policies in report order.
var Policies = []Policy{ExclusiveReject, QueueFIFO, QueueFair, FairPreemptSharing}

// ParsePolicy checks a policy name.
func ParsePolicy(s string) (Policy, error) {
	for _, p := range Policies {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown policy %q (one of exclusive-reject, queue-fifo, queue-fair, fair+preempt+sharing)", s)
}

// Config is the simulated server and the knobs the portal has.
type Config struct {
	GPUs  int
	Model string
	// SharedGPUs of them are marked shared under FairPreemptSharing, with
	// SlicesPerGPU slices each.
	SharedGPUs   int
	SlicesPerGPU int
	// Grace is the preemption grace (the portal's --preempt-grace).
	Grace time.Duration
	// HalfLife of the fair-share usage (--fair-share-half-life).
	HalfLife time.Duration
	// RatePerGPUHour in micro-units; a slice-hour costs 1/SlicesPerGPU.
	RatePerGPUHour int64
	// Window over which utilisation is measured, from the trace's start
	// (0: until the last arrival plus its duration, the latest any demand
	// could end if served at once — the same for every policy).
	Window time.Duration
	// Portal mode only (RunPortal): the maximum wait in the queue (0: no
	// expiry), GPUs partitioned into MIG instances (under every policy: it
	// is the hardware's setup; a fractional job takes the smallest
	// instance that holds it), and reservations made before the start.
	MaxWait  time.Duration
	MIG      []gpu.MockMIGPart
	Bookings []Booking
}

// DefaultConfig is 8 H100s, 3 of them shared four ways under sharing, the
// portal's default grace and half-life, 2.50 per GPU-hour.
func DefaultConfig() Config {
	return Config{GPUs: 8, Model: "H100", SharedGPUs: 3, SlicesPerGPU: 4, Grace: 120 * time.Second,
		HalfLife: 24 * time.Hour, RatePerGPUHour: 2_500_000}
}

func (c Config) validate() error {
	switch {
	case c.GPUs < 1:
		return fmt.Errorf("--gpus must be at least 1")
	case c.SlicesPerGPU < 1:
		return fmt.Errorf("slices per GPU must be at least 1")
	case c.SharedGPUs < 0 || c.SharedGPUs >= c.GPUs:
		return fmt.Errorf("--shared-gpus must be between 0 and %d (one GPU at least stays whole)", c.GPUs-1)
	case c.Grace < 0 || c.HalfLife < 0 || c.RatePerGPUHour < 0 || c.Window < 0:
		return fmt.Errorf("grace, half-life, rate and window cannot be negative")
	}
	return nil
}

// Base is the simulated clock's start: offsets in a trace count from it.
var Base = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

// EventKind is what happened in the decisions log.
type EventKind string

// Event kinds.
const (
	EvArrive  EventKind = "arrive"
	EvReject  EventKind = "reject"
	EvStart   EventKind = "start"
	EvFinish  EventKind = "finish"
	EvNotice  EventKind = "preempt-notice"
	EvStopped EventKind = "preempted"
)

// Event is one line of the log.
type Event struct {
	At   time.Time
	Kind EventKind
	Job  string
	Pool scheduler.Pool
	// Units held (for start, finish, preempted).
	Units int
	// Decision is the index in Result.Decisions of the plan that started,
	// preempted or (exclusive-reject) refused it; -1 otherwise.
	Decision int
	// Lost is the work lost at a preemption (since the last checkpoint).
	Lost time.Duration
}

// Decision is one call of scheduler.Decide and its plan.
type Decision struct {
	At       time.Time
	Snapshot scheduler.Snapshot
	Plan     scheduler.Plan
}

// Result of one policy on one trace.
type Result struct {
	Policy   Policy
	Config   Config
	Capacity map[scheduler.Pool]int
	// WeightPerUnit is how many slice-weights one unit of a pool is (a
	// whole GPU is SlicesPerGPU, a slice 1): busy time is counted in
	// slice-seconds and divided back into GPU-hours. WeightPerGPU is a
	// whole GPU's weight: SlicesPerGPU, or in the portal mode 7 ×
	// SlicesPerGPU (a MIG instance of g compute slices weighs g ×
	// SlicesPerGPU, a shared slice 7).
	WeightPerUnit map[scheduler.Pool]int
	WeightPerGPU  int
	// Portal is what the portal's records said (portal mode only).
	Portal    PortalCheck
	Window    time.Duration
	Log       []Event
	Decisions []Decision

	Jobs int
	// BusyGPUHours is units held within the window (GPU-hours; a slice is
	// 1/SlicesPerGPU); AvailableGPUHours is GPUs × window.
	BusyGPUHours, AvailableGPUHours float64
	// ServedGPUHours is the demand served within the window: what jobs
	// asked for (a 0.25 request counts a quarter however it was placed).
	ServedGPUHours float64
	Rejected       int
	Preempted      int
	LostGPUHours   float64
	// Waits per priority class: time in the queue of each job that
	// started (all its waits, resumes included).
	Waits map[string][]time.Duration
	// CostMicro per user: units held × rate, queued time free.
	CostMicro map[string]int64
	// Unfinished jobs never completed (should be 0: the simulation runs
	// until the queue is empty).
	Unfinished int
	End        time.Duration
}

// Utilisation is busy ÷ available.
func (r *Result) Utilisation() float64 {
	if r.AvailableGPUHours == 0 {
		return 0
	}
	return r.BusyGPUHours / r.AvailableGPUHours
}

type jobState int

const (
	pending jobState = iota
	waiting
	running
	done
	rejected
)

type simJob struct {
	Job
	pool      scheduler.Pool
	units     int
	prio      int
	state     jobState
	remaining time.Duration
	queuedAt  time.Time
	waited    time.Duration
	segStart  time.Time
	segment   int
	yielding  bool
	yieldsAt  time.Time // when a yielding job is stopped
	// notices counts the times it was told to yield: a stop event of an
	// earlier notice (rescinded since) is ignored.
	notices int
	started bool
	userID  int64
}

type event struct {
	at      time.Time
	order   int // at the same time: finishes and stops before arrivals
	seq     int
	kind    EventKind
	job     *simJob
	segment int
	notice  int
}

type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	if h[i].order != h[j].order {
		return h[i].order < h[j].order
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

type sim struct {
	pol    Policy
	cfg    Config
	res    *Result
	free   map[scheduler.Pool]int
	jobs   []*simJob
	events eventHeap
	seq    int
	spans  []scheduler.Span
	now    time.Time
}

// Run simulates one policy on a trace.
func Run(tr Trace, pol Policy, cfg Config) (*Result, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if _, err := ParsePolicy(string(pol)); err != nil {
		return nil, err
	}
	if len(tr) == 0 {
		return nil, fmt.Errorf("trace has no jobs")
	}
	whole := scheduler.PoolGPU(cfg.Model)
	slice := scheduler.Pool("slice|" + cfg.Model)
	s := &sim{pol: pol, cfg: cfg, free: map[scheduler.Pool]int{}}
	s.res = &Result{Policy: pol, Config: cfg, Capacity: map[scheduler.Pool]int{}, WeightPerUnit: map[scheduler.Pool]int{},
		WeightPerGPU: cfg.SlicesPerGPU, Waits: map[string][]time.Duration{}, CostMicro: map[string]int64{}, Jobs: len(tr)}
	s.res.Capacity[whole] = cfg.GPUs
	s.res.WeightPerUnit[whole] = cfg.SlicesPerGPU
	sharing := pol == FairPreemptSharing && cfg.SharedGPUs > 0
	if sharing {
		s.res.Capacity[whole] = cfg.GPUs - cfg.SharedGPUs
		s.res.Capacity[slice] = cfg.SharedGPUs * cfg.SlicesPerGPU
		s.res.WeightPerUnit[slice] = 1
	}
	for p, n := range s.res.Capacity {
		s.free[p] = n
	}
	users := map[string]int64{}
	window := cfg.Window
	for _, j := range tr {
		if _, ok := users[j.User]; !ok {
			users[j.User] = int64(len(users) + 1)
		}
		sj := &simJob{Job: j, pool: whole, units: int(j.GPUs), prio: Classes[j.Priority], remaining: j.Duration, userID: users[j.User]}
		if j.Fractional() {
			sj.units = 1
			if sharing {
				sj.pool = slice
			}
		}
		if cfg.Window == 0 {
			window = max(window, j.Arrival+j.Duration)
		}
		s.jobs = append(s.jobs, sj)
		s.push(Base.Add(j.Arrival), EvArrive, sj)
	}
	s.res.Window = window
	for s.events.Len() > 0 {
		s.now = s.events[0].at
		for s.events.Len() > 0 && s.events[0].at.Equal(s.now) {
			e := heap.Pop(&s.events).(event)
			if err := s.handle(e); err != nil {
				return nil, err
			}
		}
		if pol != ExclusiveReject {
			if err := s.drain(); err != nil {
				return nil, err
			}
		}
	}
	s.res.End = s.now.Sub(Base)
	s.account()
	return s.res, nil
}

func (s *sim) push(at time.Time, kind EventKind, j *simJob) {
	order := 1
	if kind == EvArrive {
		order = 2
	}
	s.seq++
	heap.Push(&s.events, event{at: at, order: order, seq: s.seq, kind: kind, job: j, segment: j.segment, notice: j.notices})
}

func (s *sim) log(kind EventKind, j *simJob, decision int, lost time.Duration) {
	s.res.Log = append(s.res.Log, Event{At: s.now, Kind: kind, Job: j.ID, Pool: j.pool, Units: j.units, Decision: decision, Lost: lost})
}

func (s *sim) handle(e event) error {
	j := e.job
	switch e.kind {
	case EvArrive:
		s.log(EvArrive, j, -1, 0)
		j.state, j.queuedAt = waiting, s.now
		if s.pol == ExclusiveReject {
			return s.admitOrReject(j)
		}
		if j.units > s.res.Capacity[j.pool] {
			// More units than its pool has: the portal refuses it at
			// launch rather than queue it for good (it used to wait,
			// never served and never counted).
			j.state = rejected
			s.res.Rejected++
			s.log(EvReject, j, -1, 0)
		}
	case EvFinish:
		if j.state != running || e.segment != j.segment {
			return nil // preempted meanwhile: this end is void
		}
		s.release(j)
		j.remaining = 0
		j.state = done
		s.log(EvFinish, j, -1, 0)
	case EvStopped:
		if j.state != running || e.segment != j.segment || !j.yielding || e.notice != j.notices {
			return nil // finished within its grace, or let off (rescinded)
		}
		ran := s.now.Sub(j.segStart)
		saved := time.Duration(0)
		if j.Checkpoint > 0 {
			saved = ran / j.Checkpoint * j.Checkpoint
		}
		lost := ran - saved
		j.remaining -= saved
		s.release(j)
		s.res.Preempted++
		s.res.LostGPUHours += float64(j.units*s.res.WeightPerUnit[j.pool]) / float64(s.cfg.SlicesPerGPU) * lost.Hours()
		s.log(EvStopped, j, s.noticeOf(j), lost)
		// Auto-resume: back in the queue for the work not saved.
		j.state, j.queuedAt, j.yielding, j.yieldsAt = waiting, s.now, false, time.Time{}
	}
	return nil
}

// noticeOf is the decision that told j to yield in its current segment.
func (s *sim) noticeOf(j *simJob) int {
	for i := len(s.res.Log) - 1; i >= 0; i-- {
		if e := s.res.Log[i]; e.Job == j.ID && e.Kind == EvNotice {
			return e.Decision
		}
	}
	return -1
}

func (s *sim) release(j *simJob) {
	s.free[j.pool] += j.units
	w := s.res.WeightPerUnit[j.pool]
	for i := len(s.spans) - 1; i >= 0; i-- {
		if s.spans[i].User == j.userID && s.spans[i].End.IsZero() && s.spans[i].Start.Equal(j.segStart) && s.spans[i].Units == j.units*w {
			s.spans[i].End = s.now
			break
		}
	}
	j.segment++
}

func (s *sim) request(j *simJob) scheduler.Request {
	r := scheduler.Request{ID: j.ID, User: j.userID, Pool: j.pool, Units: j.units, Priority: j.prio,
		Preemptible: j.Preemptible, Arrived: j.queuedAt, MaxRuntime: j.remaining}
	if s.pol == QueueFIFO {
		r.Priority = 0 // arrival order only
	}
	return r
}

func (s *sim) running() []scheduler.Running {
	var out []scheduler.Running
	for _, j := range s.jobs {
		if j.state == running {
			out = append(out, scheduler.Running{ID: j.ID, User: j.userID, Pool: j.pool, Units: j.units, Priority: j.prio,
				Preemptible: j.Preemptible, Started: j.segStart, EndsBy: j.segStart.Add(j.remaining), Yielding: j.yielding, YieldsAt: j.yieldsAt})
		}
	}
	return out
}

func (s *sim) snapshot(queue []scheduler.Request) scheduler.Snapshot {
	snap := scheduler.Snapshot{Now: s.now, Free: map[scheduler.Pool]int{}, Queue: queue, Running: s.running()}
	for p, n := range s.free {
		snap.Free[p] = n
	}
	switch s.pol {
	case QueueFair, FairPreemptSharing:
		snap.Policy = scheduler.Policy{Backfill: true, Preempt: s.pol == FairPreemptSharing, FairShareHalfLife: s.cfg.HalfLife, PreemptGrace: s.cfg.Grace}
		snap.Usage = scheduler.DecayedUsage(s.spans, s.now, s.cfg.HalfLife)
	}
	return snap
}

func (s *sim) decide(queue []scheduler.Request) (scheduler.Plan, int) {
	snap := s.snapshot(queue)
	plan := scheduler.Decide(snap)
	s.res.Decisions = append(s.res.Decisions, Decision{At: s.now, Snapshot: snap, Plan: plan})
	return plan, len(s.res.Decisions) - 1
}

// admitOrReject is the portal before the queue: the scheduler decides on
// this request alone; what it does not start now is refused.
func (s *sim) admitOrReject(j *simJob) error {
	plan, d := s.decide([]scheduler.Request{s.request(j)})
	if slices.Contains(plan.Start, j.ID) {
		return s.start(j, d)
	}
	j.state = rejected
	s.res.Rejected++
	s.log(EvReject, j, d, 0)
	return nil
}

// drain is Manager.Drain without the database: decide on the whole queue,
// start what the plan starts, tell its victims to yield.
func (s *sim) drain() error {
	var queue []scheduler.Request
	byID := map[string]*simJob{}
	for _, j := range s.jobs {
		byID[j.ID] = j
		if j.state == waiting {
			queue = append(queue, s.request(j))
		}
	}
	if len(queue) == 0 {
		return nil
	}
	plan, d := s.decide(queue)
	for _, id := range plan.Start {
		if err := s.start(byID[id], d); err != nil {
			return err
		}
	}
	for _, id := range plan.Preempt {
		j := byID[id]
		if j.state != running || j.yielding || !j.Preemptible {
			return fmt.Errorf("scheduler chose %s as a victim but it is not a running preemptible job", id)
		}
		j.yielding, j.yieldsAt = true, s.now.Add(s.cfg.Grace)
		j.notices++
		s.log(EvNotice, j, d, 0)
		s.push(j.yieldsAt, EvStopped, j)
	}
	// Let off as the portal does: nobody needs their units any more.
	for _, id := range plan.Rescind {
		if j := byID[id]; j.state == running && j.yielding {
			j.yielding, j.yieldsAt = false, time.Time{}
		}
	}
	return nil
}

func (s *sim) start(j *simJob, decision int) error {
	if j.units > s.free[j.pool] {
		// The portal rolls the drain back here: a scheduler bug.
		return fmt.Errorf("scheduler started %s (%d × %s) with %d free", j.ID, j.units, j.pool, s.free[j.pool])
	}
	s.free[j.pool] -= j.units
	j.waited += s.now.Sub(j.queuedAt)
	j.state, j.segStart, j.started = running, s.now, true
	s.spans = append(s.spans, scheduler.Span{User: j.userID, Units: j.units * s.res.WeightPerUnit[j.pool], Start: s.now})
	s.log(EvStart, j, decision, 0)
	s.push(s.now.Add(j.remaining), EvFinish, j)
	return nil
}

// account derives the report from the log: busy time from start to
// finish/preempted, clipped to the window.
func (s *sim) account() {
	r := s.res
	S := float64(s.cfg.SlicesPerGPU)
	end := Base.Add(r.Window)
	r.AvailableGPUHours = float64(s.cfg.GPUs) * r.Window.Hours()
	busy := BusySliceSeconds(r.Log, r.WeightPerUnit, r.Window)
	r.BusyGPUHours = float64(busy) / S / 3600
	starts := map[string]time.Time{}
	heldSliceSec := map[string]int64{}
	jobs := map[string]*simJob{}
	for _, j := range s.jobs {
		jobs[j.ID] = j
	}
	for _, e := range r.Log {
		j := jobs[e.Job]
		switch e.Kind {
		case EvStart:
			starts[e.Job] = e.At
		case EvFinish, EvStopped:
			st := starts[e.Job]
			held := int64(e.At.Sub(st) / time.Second)
			heldSliceSec[j.User] += held * int64(e.Units*r.WeightPerUnit[e.Pool])
			// Served demand: what the job asked for, within the window.
			if a, b := st, timeorder.Min(e.At, end); b.After(a) {
				r.ServedGPUHours += j.GPUs * b.Sub(a).Hours()
			}
		}
	}
	for u, ss := range heldSliceSec {
		r.CostMicro[u] = ss * s.cfg.RatePerGPUHour / (int64(s.cfg.SlicesPerGPU) * 3600)
	}
	for _, j := range s.jobs {
		if j.started {
			r.Waits[j.Priority] = append(r.Waits[j.Priority], j.waited)
		}
		if j.state != done && j.state != rejected {
			r.Unfinished++
		}
		if _, ok := r.CostMicro[j.User]; !ok {
			r.CostMicro[j.User] = 0
		}
	}
}

// BusySliceSeconds recomputes, from a log alone, the slice-seconds held
// between each start and its finish or preemption, within [0, window).
func BusySliceSeconds(log []Event, weight map[scheduler.Pool]int, window time.Duration) int64 {
	end := Base.Add(window)
	starts := map[string]time.Time{}
	var total int64
	for _, e := range log {
		switch e.Kind {
		case EvStart:
			starts[e.Job] = e.At
		case EvFinish, EvStopped:
			a, b := starts[e.Job], timeorder.Min(e.At, end)
			if b.After(a) {
				total += seconds(b.Sub(a)) * int64(e.Units*weight[e.Pool])
			}
			delete(starts, e.Job)
		}
	}
	return total
}

// seconds is a span in whole seconds, rounded (the portal engine's
// simultaneous arrivals are a microsecond apart).
func seconds(d time.Duration) int64 { return int64(d.Round(time.Second) / time.Second) }
