package simulate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"workbench/internal/timeorder"
	"workbench/models"
	"workbench/orchestrator"
	"workbench/orchestrator/gpu"
	"workbench/orchestrator/runtime"
	"workbench/orchestrator/runtime/memruntime"
	"workbench/orchestrator/scheduler"
)

// The portal mode (issue 12 §5, "the production scheduler code"): the trace
// is replayed against the portal itself — a real SQLite file in a temporary
// directory, the real Manager (launch, the queue's drainer in its BEGIN
// IMMEDIATE transaction, preemption with its grace and auto-resume,
// reservations with their no-show release, queue expiry, metering), the
// in-memory container runtime and a simulated DGX H100 (go-nvml's mock,
// MIG-partitioned as asked) — under a simulated clock the manager, the
// store and the runtime all read. The simulator only does what a user
// does (launch, stop when the work is done) and moves the clock; every
// placement, refusal, preemption and expiry is the portal's. Its report is
// derived from what it observed and then checked against the portal's own
// records (usage intervals, workbench history): a difference is an error,
// so it cannot report what the portal did not do.

// Booking is a reservation made before the trace starts (portal mode).
type Booking struct {
	User       string
	Kind       string // gpu (default), mig, slice
	Profile    string // for mig
	Units      int
	Start, End time.Duration // offsets from the trace start
}

// PortalCheck is what the portal's own records say, beside the report.
type PortalCheck struct {
	// BusyWeightSeconds from the usage intervals (weights as
	// Result.WeightPerUnit), within the window.
	BusyWeightSeconds int64
	// Preempted and Expired from the workbench histories; Refused is the
	// launches refused at once (exclusive-reject).
	Preempted, Expired, Refused int
	// Intervals is how many runs the portal metered.
	Intervals int
}

// pjob is one trace job in the portal.
type pjob struct {
	Job
	wbID      string
	flavor    string
	pool      scheduler.Pool
	units     int
	state     jobState
	remaining time.Duration
	queuedAt  time.Time
	waited    time.Duration
	segStart  time.Time
	finishAt  time.Time
	ivs       int
	started   bool
	expires   time.Time
	preemptAt time.Time
	user      *models.User
}

// migProfileSlices is the compute slices of a plain MIG profile ("3g.40gb": 3).
func migProfileSlices(p string) int {
	g, _, _ := strings.Cut(p, "g.")
	n, _ := strconv.Atoi(g)
	return n
}

// ParseMIG reads --mig: "GPU:PROFILE" fills GPU (an index) with instances
// of PROFILE (as many as its 7 compute slices hold: 2 × 3g.40gb); other
// forms are those of --mock-mig ("6:3g.40gb*2,7:1g.10gb*3+2g.20gb").
func ParseMIG(specs []string) ([]gpu.MockMIGPart, error) {
	var out []gpu.MockMIGPart
	for _, spec := range specs {
		for _, item := range strings.Split(spec, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			if _, list, ok := strings.Cut(item, ":"); ok && !strings.ContainsAny(list, "*+") {
				if g := migProfileSlices(list); g > 0 {
					item += "*" + strconv.Itoa(7/g)
				}
			}
			parts, err := gpu.ParseMockMIG(item)
			if err != nil {
				return nil, fmt.Errorf("--mig %s: %w", item, err)
			}
			out = append(out, parts...)
		}
	}
	return out, nil
}

// RunPortal replays tr against the portal under pol (see above).
func RunPortal(ctx context.Context, tr Trace, pol Policy, cfg Config) (res *Result, err error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if _, err := ParsePolicy(string(pol)); err != nil {
		return nil, err
	}
	if len(tr) == 0 {
		return nil, fmt.Errorf("trace has no jobs")
	}
	dir, err := os.MkdirTemp("", "workbench-simulate-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := models.Open(ctx, dir, log)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	var mu sync.Mutex
	now := Base
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	setNow := func(t time.Time) {
		mu.Lock()
		now = t
		mu.Unlock()
	}
	store.SetClock(clock)

	// The server: a simulated DGX H100, MIG-partitioned as asked.
	lib, err := gpu.NewMock("dgxh100")
	if err != nil {
		return nil, err
	}
	if len(cfg.MIG) > 0 {
		if err := gpu.PartitionMock(lib, cfg.MIG); err != nil {
			return nil, err
		}
	}
	inv, err := gpu.New(gpu.Mode{Kind: gpu.KindMock, Mock: "dgxh100"}, gpu.WithNVML(lib, true, gpu.KindMock+":dgxh100"), gpu.WithLogger(log))
	if err != nil {
		return nil, err
	}
	devs, err := inv.Devices(ctx)
	if err != nil {
		return nil, err
	}
	if cfg.GPUs > len(devs) {
		return nil, fmt.Errorf("the portal mode simulates at most %d GPUs (a DGX H100); --gpus %d", len(devs), cfg.GPUs)
	}
	model := devs[0].Model
	pool := orchestrator.NewPool(inv, nil, store)
	rt := memruntime.New()
	rt.SetClock(clock)
	rt.SetNVIDIA(true)
	// Jupyter's stand-in: every container answers on one loopback port.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }),
		ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	rt.SetEndpoint(func(info runtime.ContainerInfo, _ string) (string, int) {
		if !info.Running {
			return "", 0
		}
		return "127.0.0.1", port
	})
	opt := orchestrator.Options{PreemptGrace: cfg.Grace, FairShareHalfLife: cfg.HalfLife, QueueMaxWait: cfg.MaxWait,
		NoBackfill: pol == QueueFIFO, NoPreempt: pol != FairPreemptSharing, NoFairShare: pol == QueueFIFO, MinCharge: -1}
	if opt.QueueMaxWait == 0 {
		opt.QueueMaxWait = 10 * 365 * 24 * time.Hour // no expiry unless asked
	}
	if opt.FairShareHalfLife == 0 {
		opt.NoFairShare = true
	}
	m := orchestrator.NewManager(store, pool, rt, "simulate", opt, log)
	m.SetClock(clock)
	defer m.Wait()

	// What the pool offers: GPUs beyond --gpus drained, MIG GPUs as
	// partitioned, the last --shared-gpus whole ones shared (sharing only).
	migGPU := map[int]bool{}
	for _, p := range cfg.MIG {
		if p.Index >= cfg.GPUs {
			return nil, fmt.Errorf("--mig names GPU %d; the server has GPUs 0–%d", p.Index, cfg.GPUs-1)
		}
		migGPU[p.Index] = true
	}
	for i := cfg.GPUs; i < len(devs); i++ {
		if err := pool.SetDrained(ctx, devs[i].UUID, true, "simulate"); err != nil {
			return nil, err
		}
	}
	S := cfg.SlicesPerGPU
	res = &Result{Policy: pol, Config: cfg, Capacity: map[scheduler.Pool]int{}, WeightPerUnit: map[scheduler.Pool]int{},
		WeightPerGPU: 7 * S, Waits: map[string][]time.Duration{}, CostMicro: map[string]int64{}, Jobs: len(tr)}
	whole := scheduler.PoolGPU(model)
	slice := scheduler.PoolSlice(model)
	res.WeightPerUnit[whole] = 7 * S
	sharing := pol == FairPreemptSharing && cfg.SharedGPUs > 0
	shared := 0
	for i := cfg.GPUs - 1; i >= 0 && sharing && shared < cfg.SharedGPUs; i-- {
		if migGPU[i] {
			continue
		}
		if err := pool.SetShared(ctx, devs[i].UUID, models.SharedSetting{Slices: S}, "simulate"); err != nil {
			return nil, err
		}
		shared++
	}
	res.Capacity[whole] = cfg.GPUs - len(migGPU) - shared
	if shared > 0 {
		res.Capacity[slice] = shared * S
		res.WeightPerUnit[slice] = 7
	}
	profiles := map[string]int{} // MIG profile → instances
	for _, p := range cfg.MIG {
		for _, pr := range p.Profiles {
			profiles[pr]++
		}
	}
	for pr, n := range profiles {
		pl := scheduler.PoolMIG(model, pr)
		res.Capacity[pl] = n
		res.WeightPerUnit[pl] = migProfileSlices(pr) * S
	}
	if err := store.SeedDefaultPrices(ctx, []string{model}); err != nil {
		return nil, err
	}
	img := &models.Image{Name: "sim", Image: "sim:latest", StartCommand: "jupyter lab --port={port} --ServerApp.base_url={base_url} --IdentityProvider.token={token}",
		RunAsUser: "1000", HomePath: "/home/jovyan", Enabled: true}
	if err := store.CreateImage(ctx, img); err != nil {
		return nil, err
	}
	admin, err := store.CreateUser(ctx, models.NewUser{Username: "simulate-admin", Password: "simulate-admin-password", Role: "admin"})
	if err != nil {
		return nil, err
	}

	// The jobs: a user each trace user, a flavor each job (its maximum
	// runtime is the job's duration, as the pure simulator gives the
	// scheduler).
	users := map[string]*models.User{}
	userOf := func(name string) (*models.User, error) {
		if u := users[name]; u != nil {
			return u, nil
		}
		u, err := store.CreateUser(ctx, models.NewUser{Username: "sim-" + name, Password: "simulate-user-password", Role: "user"})
		if err != nil {
			return nil, fmt.Errorf("user %s: %w", name, err)
		}
		users[name] = u
		return u, nil
	}
	var jobs []*pjob
	window := cfg.Window
	for i, j := range tr {
		if j.ID == "" {
			j.ID = fmt.Sprintf("j%04d", i+1)
		}
		pj := &pjob{Job: j, pool: whole, units: int(j.GPUs), remaining: j.Duration, state: pending}
		if pj.user, err = userOf(j.User); err != nil {
			return nil, err
		}
		fl := models.Flavor{Name: "job-" + j.ID, GPUModel: model, GPUCount: int(j.GPUs), CPUMilli: 1000, MemoryMiB: 1024,
			MaxRuntimeS: int64((j.Duration + time.Second - 1) / time.Second), Enabled: true}
		if j.Fractional() {
			pj.units, fl.GPUCount = 1, 1
			switch pr := fitProfile(profiles, j.GPUs); {
			case pr != "":
				pj.pool, fl.UnitKind, fl.MIGProfile = scheduler.PoolMIG(model, pr), models.UnitMIG, pr
			case shared > 0:
				pj.pool, fl.UnitKind = slice, models.UnitSlice
			}
		}
		if err := store.CreateFlavor(ctx, &fl); err != nil {
			return nil, fmt.Errorf("flavor of %s: %w", j.ID, err)
		}
		pj.flavor = fl.Name
		if cfg.Window == 0 {
			window = max(window, j.Arrival+j.Duration)
		}
		jobs = append(jobs, pj)
	}
	res.Window = window
	sort.SliceStable(jobs, func(a, b int) bool { return jobs[a].Arrival < jobs[b].Arrival })
	var wakes []time.Time
	for _, b := range cfg.Bookings {
		u, err := userOf(b.User)
		if err != nil {
			return nil, err
		}
		if _, err := m.Reserve(ctx, u, orchestrator.ReserveRequest{Kind: b.Kind, Model: model, Profile: b.Profile, Units: b.Units,
			Start: Base.Add(b.Start), End: Base.Add(b.End), Note: "simulated", By: admin}); err != nil {
			return nil, fmt.Errorf("booking of %s: %w", b.User, err)
		}
		wakes = append(wakes, Base.Add(b.Start), Base.Add(b.Start).Add(15*time.Minute), Base.Add(b.End))
	}

	logEv := func(at time.Time, kind EventKind, j *pjob, lost time.Duration) {
		res.Log = append(res.Log, Event{At: at, Kind: kind, Job: j.ID, Pool: j.pool, Units: j.units, Decision: -1, Lost: lost})
	}
	check := PortalCheck{}
	next := 0 // next arrival
	t := Base
	for {
		setNow(t)
		// Work done: the user stops it (before arrivals, as in the pure
		// simulator).
		for _, j := range jobs {
			if j.state == running && !j.finishAt.After(t) {
				if err := m.Stop(ctx, j.wbID, ""); err != nil {
					return nil, fmt.Errorf("stop %s: %w", j.ID, err)
				}
				j.state, j.remaining = done, 0
				logEv(t, EvFinish, j, 0)
				m.Wait() // the drain the stop kicked, one stop at a time: the same run every time
			}
		}
		for k := 0; next < len(jobs) && !Base.Add(jobs[next].Arrival).After(t); next, k = next+1, k+1 {
			j := jobs[next]
			// Launches at one instant join the queue a microsecond apart,
			// in trace order: the portal orders equal arrivals by their
			// random workbench ids, the trace by its job ids.
			setNow(t.Add(time.Duration(k) * time.Microsecond))
			logEv(t, EvArrive, j, 0)
			req := orchestrator.LaunchRequest{Name: j.ID, Image: "sim", Flavor: j.flavor, Queue: pol != ExclusiveReject}
			switch {
			case pol == QueueFIFO: // every request in the default class: arrival order
			case j.Preemptible:
				req.Priority, req.Preemptible, req.AutoResume = "preemptible", true, true
			default:
				req.Priority = j.Priority
			}
			wb, err := m.Launch(ctx, j.user, req)
			var re *orchestrator.RefusedError
			// Refused for want of units: at once under exclusive-reject;
			// under the queue policies only a job the server could never
			// place (more GPUs than it has whole), which the portal refuses
			// rather than queue for good.
			if errors.As(err, &re) && re.Code == "no_capacity" {
				j.state = rejected
				res.Rejected++
				check.Refused++
				logEv(t, EvReject, j, 0)
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("launch %s: %w", j.ID, err)
			}
			j.wbID, j.state, j.queuedAt = wb.ID, waiting, clock()
			m.Wait()
		}
		setNow(t)
		// The drainer's timer: grace ends, expiry, reservations.
		if err := m.Drain(ctx); err != nil {
			return nil, err
		}
		m.Wait()
		// Observe what the portal did.
		for _, j := range jobs {
			if j.state != waiting && j.state != running {
				continue
			}
			wb, err := store.WorkbenchByID(ctx, j.wbID)
			if err != nil {
				return nil, err
			}
			ivs, err := store.IntervalsOf(ctx, j.wbID)
			if err != nil {
				return nil, err
			}
			if j.state == running && j.ivs > 0 && len(ivs) >= j.ivs && ivs[j.ivs-1].EndedAt != nil {
				// Its run ended without the user: preempted.
				end := *ivs[j.ivs-1].EndedAt
				if wb.State != models.StateQueued && wb.State != models.StatePreempted && len(ivs) == j.ivs {
					return nil, fmt.Errorf("%s ended %s: %s", j.ID, wb.State, wb.Reason)
				}
				ran := end.Sub(j.segStart)
				saved := time.Duration(0)
				if j.Checkpoint > 0 {
					saved = ran / j.Checkpoint * j.Checkpoint
				}
				j.remaining -= saved
				res.Preempted++
				logEv(end, EvStopped, j, ran-saved)
				j.state, j.queuedAt = waiting, end
			}
			if len(ivs) > j.ivs && ivs[len(ivs)-1].EndedAt == nil {
				// (Runs are metered one after the other: at most one new.)
				iv := ivs[len(ivs)-1]
				j.state, j.segStart, j.started = running, iv.StartedAt, true
				j.waited += iv.StartedAt.Sub(j.queuedAt)
				j.finishAt = iv.StartedAt.Add(j.remaining)
				logEv(iv.StartedAt, EvStart, j, 0)
			}
			j.ivs = len(ivs)
			j.preemptAt, j.expires = time.Time{}, time.Time{}
			switch {
			case j.state == running && wb.PreemptAt != nil:
				j.preemptAt = *wb.PreemptAt
			case j.state == waiting && wb.State == models.StateQueued && wb.QueueExpiresAt != nil:
				j.expires = *wb.QueueExpiresAt
			case j.state == waiting && wb.State == models.StateStopped:
				j.state = rejected // expired in the queue
				res.Rejected++
				logEv(t, EvReject, j, 0)
			case wb.State == models.StateFailed:
				return nil, fmt.Errorf("%s failed: %s", j.ID, wb.Reason)
			}
		}
		// The next moment anything happens.
		var nt time.Time
		consider := func(c time.Time) {
			if c.After(t) && (nt.IsZero() || c.Before(nt)) {
				nt = c
			}
		}
		if next < len(jobs) {
			consider(Base.Add(jobs[next].Arrival))
		}
		for _, j := range jobs {
			switch j.state {
			case running:
				consider(j.finishAt)
				if !j.preemptAt.IsZero() {
					consider(j.preemptAt)
				}
			case waiting:
				if !j.expires.IsZero() {
					consider(j.expires)
				}
			}
		}
		for _, w := range wakes {
			consider(w)
		}
		if nt.IsZero() {
			break
		}
		t = nt
	}
	res.End = t.Sub(Base)
	if err := portalAccount(ctx, res, store, jobs, &check); err != nil {
		return nil, err
	}
	return res, nil
}

// fitProfile is the smallest configured MIG profile that holds a fraction
// of a GPU (g/7 ≥ fraction), or "".
func fitProfile(profiles map[string]int, fraction float64) string {
	best, bestG := "", 8
	for pr := range profiles {
		g := migProfileSlices(pr)
		if float64(g)/7 >= fraction && (g < bestG || g == bestG && pr < best) {
			best, bestG = pr, g
		}
	}
	return best
}

// portalAccount fills the report from the observed log, as the pure
// simulator does, then checks it against the portal's records.
func portalAccount(ctx context.Context, r *Result, store *models.Store, jobs []*pjob, check *PortalCheck) error {
	end := Base.Add(r.Window)
	r.AvailableGPUHours = float64(r.Config.GPUs) * r.Window.Hours()
	busy := BusySliceSeconds(r.Log, r.WeightPerUnit, r.Window)
	per := float64(r.WeightPerGPU)
	r.BusyGPUHours = float64(busy) / per / 3600
	byID := map[string]*pjob{}
	for _, j := range jobs {
		byID[j.ID] = j
	}
	starts := map[string]time.Time{}
	held := map[string]int64{}
	for _, e := range r.Log {
		j := byID[e.Job]
		switch e.Kind {
		case EvStart:
			starts[e.Job] = e.At
		case EvFinish, EvStopped:
			st := starts[e.Job]
			held[j.User] += seconds(e.At.Sub(st)) * int64(e.Units*r.WeightPerUnit[e.Pool])
			if a, b := st, timeorder.Min(e.At, end); b.After(a) {
				r.ServedGPUHours += j.GPUs * b.Sub(a).Hours()
			}
			if e.Kind == EvStopped {
				r.LostGPUHours += float64(e.Units*r.WeightPerUnit[e.Pool]) / per * e.Lost.Hours()
			}
		}
	}
	for u, ws := range held {
		r.CostMicro[u] = ws * r.Config.RatePerGPUHour / (int64(r.WeightPerGPU) * 3600)
	}
	for _, j := range jobs {
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
	// The portal's own records.
	for _, j := range jobs {
		if j.wbID == "" {
			continue
		}
		ivs, err := store.IntervalsOf(ctx, j.wbID)
		if err != nil {
			return err
		}
		for _, iv := range ivs {
			check.Intervals++
			b := end
			if iv.EndedAt != nil && iv.EndedAt.Before(b) {
				b = *iv.EndedAt
			}
			if b.After(iv.StartedAt) {
				check.BusyWeightSeconds += seconds(b.Sub(iv.StartedAt)) * int64(iv.GPUCount*r.WeightPerUnit[j.pool])
			}
		}
		hist, err := store.WorkbenchHistory(ctx, j.wbID)
		if err != nil {
			return err
		}
		for _, h := range hist {
			switch {
			case h.State == models.StatePreempted:
				check.Preempted++
			case h.State == models.StateStopped && strings.HasPrefix(h.Message, "expired"):
				check.Expired++
			}
		}
	}
	r.Portal = *check
	if check.BusyWeightSeconds != busy || check.Preempted != r.Preempted || check.Refused+check.Expired != r.Rejected {
		return fmt.Errorf("the simulator's log disagrees with the portal's records: busy %d vs %d weight-seconds, preempted %d vs %d, rejected %d vs %d refused + %d expired",
			busy, check.BusyWeightSeconds, r.Preempted, check.Preempted, r.Rejected, check.Refused, check.Expired)
	}
	return nil
}
