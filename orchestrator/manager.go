package orchestrator

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// JupyterPort is the port Jupyter listens on inside every workbench
// container; each container has its own address, so one port fits all.
const JupyterPort = models.JupyterPort

// ErrEngineUnavailable is returned when the container engine cannot be
// reached; handlers answer 503.
var ErrEngineUnavailable = runtime.ErrEngineUnavailable

// Options tune the manager; zero values take the defaults.
type Options struct {
	ReadyTimeout     time.Duration // how long Jupyter may take to answer after start (default 10 min)
	StopGrace        time.Duration // SIGTERM → SIGKILL (default 10 s)
	ReconcileEvery   time.Duration // periodic reconciliation (default 30 s)
	CullEvery        time.Duration // idle/max-runtime check (default 60 s)
	OrphanGrace      time.Duration // labelled containers with no record are removed after this (default 10 min)
	DefaultIdle      time.Duration // idle timeout of a new workbench (default 60 min)
	MinIdle, MaxIdle time.Duration // bounds a user may choose within (default 10 min … 24 h)
	// GPUWorkIsActivity counts a workbench's GPU units read busy as
	// activity for the idle timeout (gpu_work.go). Off by default: the
	// SPEC's idle rule is proxy traffic and busy kernels only.
	GPUWorkIsActivity bool
	PidsLimit         int64         // per container (default 4096)
	MinCharge         time.Duration // minimum charge per run (default 60 s; negative = none)
	HeartbeatEvery    time.Duration // usage heartbeat (default 30 s)
	BillEvery         time.Duration // ledger writing and quota enforcement (default 60 s)
	StorageEvery      time.Duration // home volume measurement (default 5 min)
	// Egress is the egress policy until an admin sets one (default:
	// internet only).
	Egress runtime.EgressPolicy
	// DataIdentity names the data this manager runs on (the database
	// file's device and inode): a crashed holder of the install lease
	// with the same data on this host is taken over at once (lease.go).
	DataIdentity string
	// GPURollupRetention keeps per-minute GPU rollups this long (default
	// 35 days, DefaultGPURollupRetention).
	GPURollupRetention time.Duration
	// SavedImageQuotaBytes bounds the storage one user's saved images
	// take (default 50 GiB; negative = no limit). See saved_image.go.
	SavedImageQuotaBytes int64
	// The queue (docs/scheduling.md): how long a queued launch may wait
	// (default 24 h), how often the drainer runs besides the events that
	// free capacity (default 15 s), the half-life of the recent GPU use
	// that orders equal priorities (default 24 h), the grace a preempted
	// run gets to checkpoint (default 120 s), and whether backfill is off.
	QueueMaxWait      time.Duration
	DrainEvery        time.Duration
	FairShareHalfLife time.Duration
	PreemptGrace      time.Duration
	NoBackfill        bool
	// NoPreempt and NoFairShare turn preemption and the fair-share order
	// off (the simulator's queue-fifo and queue-fair policies; a portal
	// runs with both on).
	NoPreempt   bool
	NoFairShare bool
	// Currency is the ISO code of every price, written beside the amounts
	// of a budget refusal.
	Currency string
	// ReservationNoShow releases a reservation whose booker uses none of
	// it this long after its start (default 15 min).
	ReservationNoShow time.Duration
}

func (o *Options) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&o.ReadyTimeout, 10*time.Minute)
	def(&o.StopGrace, 10*time.Second)
	def(&o.ReconcileEvery, 30*time.Second)
	def(&o.CullEvery, time.Minute)
	def(&o.OrphanGrace, 10*time.Minute)
	def(&o.DefaultIdle, time.Hour)
	def(&o.MinIdle, 10*time.Minute)
	def(&o.MaxIdle, 24*time.Hour)
	if o.SavedImageQuotaBytes == 0 {
		o.SavedImageQuotaBytes = DefaultSavedImageQuotaBytes
	}
	if o.PidsLimit == 0 {
		o.PidsLimit = 4096
	}
	def(&o.MinCharge, 60*time.Second)
	if o.MinCharge < 0 {
		o.MinCharge = 0
	}
	def(&o.HeartbeatEvery, 30*time.Second)
	def(&o.BillEvery, time.Minute)
	def(&o.StorageEvery, 5*time.Minute)
	def(&o.QueueMaxWait, 24*time.Hour)
	def(&o.DrainEvery, 15*time.Second)
	def(&o.FairShareHalfLife, 24*time.Hour)
	def(&o.PreemptGrace, 120*time.Second)
	def(&o.ReservationNoShow, 15*time.Minute)
	if o.Egress.Mode == "" {
		o.Egress.Mode = runtime.EgressInternet
	}
}

// Manager runs the life of every workbench (SPEC §3): launch, stop, start,
// delete, reconciliation with the engine, idle culling. The database is the
// record of intent; the engine's labelled containers are the truth it is
// reconciled against.
type Manager struct {
	// billRounds counts finished BillAndEnforce passes (BillRounds).
	billRounds atomic.Uint64
	// imageSaves holds one *sync.Mutex per owner ID: an owner's saves run
	// one at a time (saved_image.go).
	imageSaves sync.Map
	// savingRefs holds the engine names of the saves under way (not yet
	// in the catalog): the sweep of unfinished saves leaves them alone.
	savingRefs sync.Map
	// ownPaused holds the workbenches whose containers a save pauses
	// (paused.go): not a pause outside the portal.
	ownPaused ownPauses
	// stoppedUnrecorded holds the workbenches whose containers a stop
	// stopped while the database could not record it (id → the stop's
	// reason): reconciliation records the stop once it can.
	stoppedUnrecorded sync.Map
	// unitIdle follows idle runs of MIG instances and slice holders (unit_idle.go).
	unitIdle unitIdleRuns
	// attribution keeps the active workbenches with their owners, and
	// pidContainers each GPU process's container, between GPUUse calls
	// (gpu_use.go).
	attribution   models.Cache[*attribution]
	pidContainers pidContainerCache
	// unitHist keeps each collection's per-unit readings and energy
	// shares for the per-unit rollup and sparklines (unit_history.go).
	unitHist unitHistory
	// holders keeps who held each GPU whole at each sampler collection,
	// for the per-minute rollup (gpu_holders.go).
	holders holderHistory
	enginePingState
	store     *models.Store
	pool      *Pool
	rt        runtime.Runtime
	installID string
	opt       Options
	log       *slog.Logger
	http      *http.Client
	events    *Broker
	activity  *activityTracker
	billing   *Billing
	moneyErrs moneyErrors
	budgets   budgetTimers
	// runtimeStops stop runs at their maximum runtime (runtime_timer.go).
	runtimeStops runtimeTimers
	// stopSoons warn owners before those stops (stop_soon.go).
	stopSoons stopSoonTimers
	// budgetWork counts the background recomputations of budget instants
	// (budget_timer.go), so a test can let them finish before it changes
	// a quota.
	budgetWork sync.WaitGroup
	lease      lease
	// openIntervalFn records a new usage interval (the store's; tests
	// make it fail to see the workbench stopped rather than run unbilled).
	openIntervalFn func(context.Context, *models.UsageInterval) error
	routes         sync.Map      // workbench id → cachedRoute (see proxy_target.go)
	pulls          prePulls      // admins' pre-pulls (see image_pull.go)
	images         imagePresence // ImageSize answers (see image_presence.go)

	// removingHomes holds the home volumes the portal is removing right now
	// (home_vanished.go): metering must not take them for a removal behind
	// its back.
	removingHomes sync.Map

	// offNetwork holds the running workbenches found off the install's
	// network and not yet back on it (network_repair.go): warned once.
	offNetwork sync.Map

	// notices tells owners what happened to their workbenches
	// (notify_owner.go).
	notices ownerNotices

	// fw enforces the egress policy; egress is its last outcome (egress.go).
	fw     Firewall
	egress egressState

	// launching holds the background launches (pull, create, start, wait
	// for Jupyter) running in this process: reconciliation leaves those
	// workbenches alone, and Stop cancels them.
	mu        sync.Mutex
	launching map[string]*launchRun
	// claimed marks workbenches a stop or a reconciliation is working on
	// right now, so the two never act on one workbench at once.
	claimed map[string]bool
	// unpriced counts billing passes in a row that could not price a
	// running workbench (see stopUnpriced).
	unpriced map[string]int
	wg       sync.WaitGroup
	// life is the context of the manager's cancellable background work
	// (launches, image tests, pre-pulls, queue drains); Shutdown ends it.
	life    context.Context
	endLife context.CancelFunc
	// started is when this manager began: Test image runs recorded before
	// it were left behind by a previous process.
	started time.Time
	// clock is the culler's and the deadlines' time (see SetClock).
	clock func() time.Time
	// accepting is held (read) by a launch or start from writing its
	// transitional record until its background work is registered in
	// launching; reconciliation takes it (write) before deciding that a
	// transitional workbench has nobody driving it.
	accepting sync.RWMutex
	// metrics are the spawn histogram and cull counters (portal_metrics.go).
	metrics *portalMetrics
	// rolledUpTo is the end of the last per-minute GPU rollup (gpu_rollup.go).
	rollupMu   sync.Mutex
	rolledUpTo time.Time
	// drainMu keeps one drain of the queue at a time in this process (the
	// database transaction already keeps them apart across processes);
	// drainPending coalesces kicks (queue.go).
	drainMu      sync.Mutex
	drainPending atomic.Bool
}

// NewManager builds the manager. installID labels every object it creates.
func NewManager(store *models.Store, pool *Pool, rt runtime.Runtime, installID string, opt Options, log *slog.Logger) *Manager {
	opt.defaults()
	m := &Manager{
		store: store, pool: pool, rt: rt, installID: installID, opt: opt, log: log.With("component", "workbenches"),
		http:           &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 4}},
		events:         NewBroker(),
		activity:       newActivityTracker(),
		billing:        NewBilling(store, opt.MinCharge),
		openIntervalFn: store.OpenInterval,
		launching:      map[string]*launchRun{},
		claimed:        map[string]bool{},
		unpriced:       map[string]int{},
		clock:          time.Now,
		started:        time.Now().UTC(),
		fw:             runtime.NewFirewall(log.With("component", "egress")),
		metrics:        newPortalMetrics(),
	}
	m.life, m.endLife = context.WithCancel(context.Background())
	m.billing.metered = m.meteredLines
	m.billing.stoppedAt = m.unrecordedStopEnd
	m.WatchUnitIdle()
	return m
}

// Billing is the biller (ledger writing, live cost).
func (m *Manager) Billing() *Billing { return m.billing }

// Events is the broker of workbench state changes (for SSE).
func (m *Manager) Events() *Broker { return m.events }

// Options returns the effective options.
func (m *Manager) Options() Options { return m.opt }

// Run reconciles at once, then keeps the database in line with the engine
// (on Docker events and periodically), culls idle workbenches, records
// heartbeats, bills, meters storage and flushes proxy activity, until ctx
// ends. It never stops a workbench on exit.
//
// Each duty has its own loop: a slow engine call in one (measuring volumes
// walks their files and, on older engines, every container's layer) must
// not hold up the others. A CI run once saw an orphan outlive its grace by
// 10 s because reconciliation waited behind a storage measurement.
func (m *Manager) Run(ctx context.Context) {
	// Only the holder of the install lease reconciles (see lease.go).
	// A failure is logged when it first happens or changes, not at every
	// retry: an engine that is down (restarting, or not installed yet)
	// would otherwise write an ERROR every 20 s for as long as it is.
	var lastFailure string
	for {
		if held, _ := m.LeaseStatus(); held {
			break
		}
		err := m.AcquireLease(ctx)
		if err == nil {
			if lastFailure != "" {
				m.log.Info("install lease taken: reconciling")
			}
			break
		}
		if ctx.Err() != nil {
			return
		}
		if f := leaseFailureKind(err); f != lastFailure {
			lastFailure = f
			if errors.Is(err, runtime.ErrEngineUnavailable) {
				m.log.Warn("install lease: waiting for the container engine; not reconciling until it answers", "err", err)
			} else {
				m.log.Error("install lease: not reconciling", "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(leaseStale):
		}
	}
	ctx, lost := context.WithCancel(ctx)
	defer lost()
	defer m.ReleaseLease(context.WithoutCancel(ctx))
	go m.keepLease(ctx, lost)
	m.failInterruptedImageChecks(ctx)
	m.removeUnfinishedSaves(ctx)
	if err := m.Reconcile(ctx); err != nil {
		m.log.Warn("initial reconciliation", "err", err)
	}
	var wg sync.WaitGroup
	duty := func(every time.Duration, now bool, fn func(context.Context)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			periodically(ctx, every, now, fn)
		}()
	}
	duty(m.opt.ReconcileEvery, false, func(ctx context.Context) {
		if err := m.Reconcile(ctx); err != nil && !errors.Is(err, context.Canceled) {
			m.log.Warn("reconciliation", "err", err)
		}
	})
	// A commit the engine went on with after the process before this one
	// died can land after the start's pass: look again at every
	// reconciliation's pace.
	duty(m.opt.ReconcileEvery, false, m.removeUnfinishedSaves)
	duty(m.opt.ReconcileEvery, false, m.flushKeptAudit)
	duty(m.opt.StorageEvery, true, m.MeterStorage)
	duty(egressEvery, true, m.keepEgress)
	duty(m.opt.CullEvery, false, m.Cull)
	duty(5*time.Second, false, m.flushActivity)
	duty(m.opt.HeartbeatEvery, false, m.heartbeat)
	duty(m.opt.BillEvery, false, m.BillAndEnforce)
	m.scheduleBudgets(ctx)
	duty(time.Minute, false, m.RollupGPUMinutes)
	duty(m.opt.DrainEvery, true, func(ctx context.Context) {
		if err := m.Drain(ctx); err != nil && !errors.Is(err, context.Canceled) {
			m.log.Warn("queue drain", "err", err)
		}
	})
	m.watchEvents(ctx)
	wg.Wait()
	for _, uid := range m.budgets.users() {
		m.budgets.cancel(uid)
	}
	m.runtimeStops.stopAll()
	m.stopSoons.stopAll()
	m.flushActivity(context.Background())
	// Audit rows still waiting for the database go to the log, the only
	// place left for them once the process ends.
	m.flushKeptAudit(context.Background())
	m.store.LogKeptAudit()
}

// flushKeptAudit writes the audit rows kept while the database could not
// be written (models.AuditHappened), once it can be: at reconciliation's
// pace, even when no new row comes to write them.
func (m *Manager) flushKeptAudit(ctx context.Context) {
	if m.store.KeptAudit() == 0 {
		return
	}
	if err := m.store.FlushKeptAudit(ctx); err != nil && !models.Unwritable(err) && !errors.Is(err, context.Canceled) {
		m.log.Warn("audit rows kept while the database could not be written", "err", err)
	}
}

// leaseFailureKind groups lease failures that say the same thing, so Run
// logs each kind once: the engine down, another portal holding the lease
// (its last beat changes at every try), or any other error as worded.
func leaseFailureKind(err error) string {
	var held *LeaseError
	switch {
	case errors.Is(err, runtime.ErrEngineUnavailable):
		return "engine unavailable"
	case errors.As(err, &held):
		return "held by " + held.Holder
	default:
		return err.Error()
	}
}

// periodically calls fn every interval until ctx ends (at once first when
// now is set). Calls of one duty never overlap.
func periodically(ctx context.Context, every time.Duration, now bool, fn func(context.Context)) {
	if now {
		fn(ctx)
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn(ctx)
		}
	}
}

// Wait blocks until launch pipelines and detached work (stops, deletions)
// started by this process have ended (tests use it; a server shutting down
// does not wait: reconciliation at the next start finishes what was cut).
func (m *Manager) Wait() { m.wg.Wait() }

// watchEvents reconciles one workbench whenever the engine reports a
// container of this install starting, dying or vanishing.
func (m *Manager) watchEvents(ctx context.Context) {
	for ctx.Err() == nil {
		evs, errs := m.rt.Events(ctx, m.installID)
		for ev := range evs {
			if ev.WorkbenchID != "" {
				m.reconcileOne(ctx, ev.WorkbenchID)
			}
		}
		if err := <-errs; err != nil && ctx.Err() == nil {
			m.log.Warn("engine event stream broke; retrying", "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Second):
		}
	}
}

// launchRun is one background launch of a workbench.
type launchRun struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// inBackground runs a workbench's launch steps in the background, with a
// context that Stop can cancel (the launch outlives the HTTP request that
// asked for it). A failure marks the workbench failed, unless it was
// cancelled: then whoever cancelled it decides the state.
//
// Once Shutdown has begun nothing is started: the record stays as it is,
// and the next start takes the launch up (reconciliation).
func (m *Manager) inBackground(id string, steps func(ctx context.Context) error) {
	if m.closing() {
		m.log.Info("launch left for the next start: the portal is shutting down", "id", id)
		return
	}
	ctx, cancel := context.WithCancel(m.life)
	run := &launchRun{cancel: cancel, done: make(chan struct{})}
	m.mu.Lock()
	m.launching[id] = run
	m.mu.Unlock()
	m.wg.Add(1)
	began := time.Now()
	go func() {
		defer m.wg.Done()
		defer close(run.done)
		defer func() {
			m.mu.Lock()
			delete(m.launching, id)
			m.mu.Unlock()
			cancel()
		}()
		err := steps(ctx)
		if err == nil {
			m.metrics.spawned(true, time.Since(began))
		}
		if err != nil {
			if ctx.Err() != nil {
				m.log.Info("launch cancelled", "id", id)
				return
			}
			if errors.Is(err, models.ErrStateChanged) {
				// A stop (or a reconciliation) moved the workbench while
				// this launch ran; the state is theirs to finish.
				m.log.Info("launch superseded", "id", id, "err", err)
				return
			}
			m.metrics.spawned(false, time.Since(began))
			m.log.Warn("launch failed", "id", id, "err", err)
			m.fail(context.Background(), id, err.Error())
		}
	}()
}

// cancelLaunch stops a background launch of id, if any, and waits for it.
func (m *Manager) cancelLaunch(id string) {
	m.mu.Lock()
	run := m.launching[id]
	m.mu.Unlock()
	if run == nil {
		return
	}
	run.cancel()
	select {
	case <-run.done:
	case <-time.After(30 * time.Second):
		m.log.Warn("launch did not end after cancel", "id", id)
	}
}

func (m *Manager) isLaunching(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.launching[id] != nil
}

// claim marks id as being worked on by a stop or a reconciliation; it fails
// when a launch or another claim holds it. release undoes it.
func (m *Manager) claim(id string, evenIfLaunching bool) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.claimed[id] || (!evenIfLaunching && m.launching[id] != nil) {
		return false
	}
	m.claimed[id] = true
	return true
}

func (m *Manager) release(id string) {
	m.mu.Lock()
	delete(m.claimed, id)
	m.mu.Unlock()
}

// transition records a compare-and-set state change (models.Transition:
// the workbench must be in one of t.From) and publishes it. A stop error
// only lives while the workbench is stopping: any other state clears it.
// It returns models.ErrStateChanged when someone else moved the workbench
// first; the caller then leaves it to them.
func (m *Manager) transition(ctx context.Context, id string, t models.Transition) error {
	defer m.forgetRoute(id)
	if t.To != models.StateStopping {
		t.Set.StopError = new("")
	}
	if err := m.store.TransitionWorkbench(ctx, id, t); err != nil {
		if errors.Is(err, models.ErrStateChanged) {
			m.log.Info("state change refused: the workbench moved meanwhile", "id", id, "err", err)
		} else {
			m.log.Error("record workbench state", "id", id, "state", t.To, "err", err)
		}
		return err
	}
	stopErr := ""
	if t.Set.StopError != nil {
		stopErr = *t.Set.StopError
	}
	u := Update{ID: id, State: t.To, Progress: t.Progress, Reason: t.Reason, Error: stopErr, At: time.Now().UTC()}
	if t.Requeue != nil { // pages see where it ended: back in the queue
		u.State, u.Progress, u.Reason = models.StateQueued, 0, t.Requeue.Message
	}
	m.events.Publish(u)
	return nil
}

// setFields changes columns of a workbench (no state change) and drops its
// cached route.
func (m *Manager) setFields(ctx context.Context, id string, f models.WorkbenchFields) {
	defer m.forgetRoute(id)
	if err := m.store.UpdateWorkbenchFields(ctx, id, f); err != nil {
		m.log.Warn("update workbench", "id", id, "err", err)
	}
}

// setState records a state change whatever the previous state and
// publishes it.
//
// Deprecated: use transition, which checks the previous state.
func (m *Manager) setState(ctx context.Context, id, state string, progress int, reason string, extra map[string]any) {
	defer m.forgetRoute(id)
	fields := make(map[string]any, len(extra)+1)
	for k, v := range extra {
		fields[k] = v
	}
	if state != models.StateStopping {
		fields["stop_error"] = ""
	}
	if err := m.store.SetWorkbenchState(ctx, id, state, progress, reason, fields); err != nil {
		m.log.Error("record workbench state", "id", id, "state", state, "err", err)
		return
	}
	stopErr, _ := fields["stop_error"].(string)
	m.events.Publish(Update{ID: id, State: state, Progress: progress, Reason: reason, Error: stopErr, At: time.Now().UTC()})
}

// Object names. They carry the install id so two portals never collide.
// A home volume is named by its owner's home name (models.User.HomeName:
// the username the account was made with, kept through a rename).
func (m *Manager) containerName(id string) string { return "wb-" + m.installID + "-" + id }
func (m *Manager) homeVolume(homeName string) string {
	return "wb-home-" + m.installID + "-" + homeName
}

// network is the one bridge network of all this install's workbenches. Its
// inter-container traffic is disabled (icc=false), so workbenches cannot
// reach each other while the portal, on the host, reaches each one. One
// shared network rather than one per user: on Docker's iptables backend,
// creating any network briefly reorders the rules that keep separate
// networks apart, and connections opened in that window stay open; the
// icc=false rule within one network is never moved.
func (m *Manager) network() string { return "wb-net-" + m.installID }

func (m *Manager) labels(id, owner string) map[string]string {
	l := map[string]string{runtime.LabelInstall: m.installID, runtime.LabelOwner: owner}
	if id != "" {
		l[runtime.LabelID] = id
	}
	return l
}

// EnginePing reports whether the container engine answers.
func (m *Manager) EnginePing(ctx context.Context) error { return m.rt.Ping(ctx) }

// updateWorkbench changes columns of a workbench and drops its cached route.
//
// Deprecated: use setFields (typed columns).
func (m *Manager) updateWorkbench(ctx context.Context, id string, fields map[string]any) {
	defer m.forgetRoute(id)
	if err := m.store.UpdateWorkbench(ctx, id, fields); err != nil {
		m.log.Warn("update workbench", "id", id, "err", err)
	}
}
