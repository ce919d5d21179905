package orchestrator

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"workbench/models"
	"workbench/models/pricing"
)

// Budgets stop running work at the instant they run out (SPEC §6 rule 12),
// not at the next billing pass: for each user with a budget or a GPU-hour
// limit and running workbenches, the instant the month's usage reaches the
// limit at the live rate is computed and a timer stops the workbenches
// then. It is recomputed on every launch and stop, on price and quota
// changes (BudgetsChanged), at the next scheduled rate change, and on each
// billing pass as a safety net.

// budgetTimers holds one timer per user, and the instant it stops the
// user's work when that is what it waits for (not a rate change).
type budgetTimers struct {
	mu     sync.Mutex
	timers map[int64]*time.Timer
	stops  map[int64]budgetStop
}

// budgetStop is when a user's work is stopped for a monthly limit, and
// which of it.
type budgetStop struct {
	at time.Time
	stopScope
}

// stopScope says which running workbenches a limit stops: gpuOnly, the
// limit is on GPU-hours (CPU-only workbenches keep running); spare, the
// workbenches held wholly by the user's bookings then, when what stops
// the others is the budget the bookings set aside (booking_set_aside.go):
// stopping those would save nothing, their booked time is billed anyway.
type stopScope struct {
	gpuOnly bool
	spare   map[string]bool
	// setAside: the stop is for what the bookings set aside, not for the
	// limit itself (the workbench page words it so).
	setAside bool
}

// stops reports whether the scope stops wb.
func (s stopScope) stops(wb *models.Workbench) bool { return s.stopsRun(wb.ID, holdsWholeGPUs(wb)) }

// stopsRun reports whether the scope stops the run id, which holds whole
// GPUs or not (the queue's snapshot knows its units' kind, not its GPUs).
func (s stopScope) stopsRun(id string, holdsGPUs bool) bool {
	return (!s.gpuOnly || holdsGPUs) && !s.spare[id]
}

// countsGPUHours reports whether units of kind count towards the
// GPU-hours limit: whole GPUs only, as the launch check and the ledger's
// GPU-seconds count them (docs/gpu-units.md). MIG instances and slices
// are bounded by the budget. Counting them as GPUs gave a class's slice
// and MIG runs a "monthly limit is reached at …" stop that moved forward
// with the clock while their GPU-hours bar read 0.00, and queue estimates
// hours late.
func countsGPUHours(kind string) bool { return kind == "" || kind == models.UnitGPU }

// holdsWholeGPUs reports whether wb holds a whole GPU, what a GPU-hours
// limit stops.
func holdsWholeGPUs(wb *models.Workbench) bool {
	for _, u := range wb.Units {
		if countsGPUHours(u.Kind) {
			return true
		}
	}
	return false
}

// setStop records (at non-zero) or forgets the stop instant of uid.
func (bt *budgetTimers) setStop(uid int64, at time.Time, scope stopScope) {
	bt.mu.Lock()
	defer bt.mu.Unlock()
	if at.IsZero() {
		delete(bt.stops, uid)
		return
	}
	if bt.stops == nil {
		bt.stops = map[int64]budgetStop{}
	}
	bt.stops[uid] = budgetStop{at: at, stopScope: scope}
}

// stopOf is uid's recorded stop instant, if any.
func (bt *budgetTimers) stopOf(uid int64) (budgetStop, bool) {
	bt.mu.Lock()
	defer bt.mu.Unlock()
	st, ok := bt.stops[uid]
	return st, ok
}

func (bt *budgetTimers) set(uid int64, d time.Duration, fn func()) {
	bt.mu.Lock()
	defer bt.mu.Unlock()
	if bt.timers == nil {
		bt.timers = map[int64]*time.Timer{}
	}
	if t := bt.timers[uid]; t != nil {
		t.Stop()
	}
	bt.timers[uid] = time.AfterFunc(d, fn)
}

func (bt *budgetTimers) cancel(uid int64) {
	bt.mu.Lock()
	defer bt.mu.Unlock()
	if t := bt.timers[uid]; t != nil {
		t.Stop()
		delete(bt.timers, uid)
	}
	delete(bt.stops, uid)
}

func (bt *budgetTimers) users() []int64 {
	bt.mu.Lock()
	defer bt.mu.Unlock()
	out := make([]int64, 0, len(bt.timers))
	for uid := range bt.timers {
		out = append(out, uid)
	}
	return out
}

// BudgetsChanged recomputes every user's exhaustion instant (prices or
// quotas changed). It returns at once; the work is done in the background.
func (m *Manager) BudgetsChanged() {
	if m == nil {
		return
	}
	m.budgetWork.Go(func() { m.scheduleBudgets(context.Background()) })
}

// budgetChanged recomputes one user's instant (a launch or a stop).
func (m *Manager) budgetChanged(uid int64) {
	m.budgetWork.Go(func() { m.scheduleBudget(context.Background(), uid) })
}

// scheduleBudgets recomputes the instant of every user who holds
// resources, and drops the timers of those who no longer do.
func (m *Manager) scheduleBudgets(ctx context.Context) {
	users, err := m.store.UsersWithOpenIntervals(ctx)
	if err != nil {
		m.moneyError(ctx, moneyErrEnforcement, "", err, false)
		return
	}
	holding := map[int64]bool{}
	for _, uid := range users {
		holding[uid] = true
		m.scheduleBudget(ctx, uid)
	}
	for _, uid := range m.budgets.users() {
		if !holding[uid] {
			m.budgets.cancel(uid)
		}
	}
}

// scheduleBudget sets uid's timer to the instant their month's usage
// reaches a limit, or stops their workbenches now if it has.
func (m *Manager) scheduleBudget(ctx context.Context, uid int64) {
	at, reason, scope, err := m.exhaustion(ctx, uid)
	if err != nil {
		m.moneyError(ctx, moneyErrEnforcement, fmt.Sprintf("user:%d", uid), err, false)
		return
	}
	if at.IsZero() {
		m.budgets.cancel(uid)
		return
	}
	d := at.Sub(m.billing.now())
	if d > 0 {
		m.budgets.set(uid, d, func() { m.scheduleBudget(context.Background(), uid) })
		// Shown on the workbench's page beside its other deadlines; a
		// rate change due first leaves the stop unknown until then.
		stopAt := at
		if reason == "" {
			stopAt = time.Time{}
		}
		m.budgets.setStop(uid, stopAt, scope)
		// A stop brought forward is warned of now, not at the next pass.
		m.rearmStopSoonOf(ctx, uid)
		return
	}
	if reason == "" {
		// Only a rate change was due: recompute with it in force.
		m.budgets.set(uid, time.Millisecond, func() { m.scheduleBudget(context.Background(), uid) })
		return
	}
	m.budgets.cancel(uid)
	m.stopForLimit(ctx, uid, reason, scope)
}

// budgetLeft is budget − spent without wrapping: credits make spent
// negative, and a budget stored before models.MaxBudgetMicros bounded it
// may be near int64's top (its wrapped difference was negative, and every
// running workbench of the user was stopped as over budget).
func budgetLeft(budget, spent int64) int64 {
	left := budget - spent
	if spent < 0 && left < budget {
		return math.MaxInt64
	}
	return left
}

// exhaustion is when uid's month's usage reaches a limit at the live rate:
// just after the last second that still fits has begun (lastStep), so
// that the stop has that whole second to land before one more is charged.
// reason is "" when at is only the next rate change (the
// instant must then be computed again); scope says which workbenches
// stop (stopScope). Zero at: no limit applies or nothing runs.
func (m *Manager) exhaustion(ctx context.Context, uid int64) (at time.Time, reason string, scope stopScope, err error) {
	lim, err := m.store.EffectiveQuota(ctx, uid)
	if err != nil {
		return
	}
	if lim.BudgetPerMonthMicros == nil && lim.GPUHoursPerMonth == nil {
		return
	}
	open, err := m.store.OpenIntervals(ctx, uid)
	if err != nil || len(open) == 0 {
		return
	}
	scheds, err := m.store.Schedules(ctx)
	if err != nil {
		return
	}
	use, err := m.billing.MonthUsage(ctx, uid)
	if err != nil {
		return
	}
	now := m.billing.now()
	var perHour int64 // micro-units an hour at the rates in force now
	var gpus int64
	var runs, gpuRuns []liveRun
	for _, iv := range open {
		r, rerr := m.billing.hourlyRate(shapeOf(iv), scheds)
		if rerr != nil {
			return time.Time{}, "", stopScope{}, rerr
		}
		perHour += r
		minEnd := iv.StartedAt.Add(m.billing.minChargeOf(iv))
		runs = append(runs, liveRun{perHour: r, minEnd: minEnd})
		if iv.GPUCount > 0 && countsGPUHours(iv.UnitKind) {
			gpus += int64(iv.GPUCount)
			// GPU-seconds an hour: the GPU-hours limit is spent as the
			// budget is, a young run's minimum counted already.
			gpuRuns = append(gpuRuns, liveRun{perHour: int64(iv.GPUCount) * 3600, minEnd: minEnd})
		}
	}
	// Whole seconds more that fit: a second is charged once begun.
	var spareUntil map[string]time.Time // set when the set-aside stops first
	consider := func(seconds int64, why string, onlyGPU bool, spare map[string]time.Time) {
		if seconds < 0 {
			seconds = 0
		}
		t := now.Add(time.Duration(seconds) * time.Second)
		if at.IsZero() || t.Before(at) {
			at, reason, scope.gpuOnly, spareUntil, scope.setAside = t, why, onlyGPU, spare, spare != nil
		}
	}
	if b := lim.BudgetPerMonthMicros; b != nil && perHour > 0 {
		if secs, ok := secondsUntilSpent(budgetLeft(*b, use.AmountMicros), now, runs); ok && secs < math.MaxInt32 {
			consider(secs, models.BudgetUsedUp(), false, nil)
		}
		aside, err := m.setAsideFor(ctx, uid, now)
		if err != nil {
			return time.Time{}, "", stopScope{}, err
		}
		if aside.micros > 0 {
			// Work on a booking takes from what it set aside: until the
			// booking ends it adds nothing to what will be billed.
			held, spare := drawOnBookings(open, aside.covers, runs)
			if secs, ok := secondsUntilSpent(budgetLeft(*b, use.AmountMicros+aside.micros), now, held); ok && secs < math.MaxInt32 {
				consider(secs, reasonf("quota exceeded: what is left of your monthly budget is set aside for the booked time your bookings would leave unused"), false, spare)
			}
		}
	}
	if g := lim.GPUHoursPerMonth; g != nil && gpus > 0 {
		// left/gpus was early by what was left of a young run's minimum:
		// its GPU-seconds do not grow until then (the page showed the stop
		// a minute early; the timer, firing then, found time left).
		if secs, ok := secondsUntilSpent(*g*3600-use.GPUSeconds, now, gpuRuns); ok && secs < math.MaxInt32 {
			consider(secs, reasonf("quota exceeded: the monthly limit of %d GPU-hours is used up", *g), true, nil)
		}
	}
	if at.IsZero() {
		return
	}
	if at.After(now) {
		at = lastStep(at, open).Add(time.Millisecond)
	}
	for id, until := range spareUntil {
		if until.After(at) { // still held by its booking when the others stop
			if scope.spare == nil {
				scope.spare = map[string]bool{}
			}
			scope.spare[id] = true
		}
	}
	m.log.Debug("budget: exhaustion", "user", uid, "use", use.AmountMicros, "per_hour", perHour, "at", at, "now", now, "open", len(open))
	// A rate change before then moves the instant: look again at it.
	if next := nextRateChange(scheds, now); !next.IsZero() && next.Before(at) {
		return next, "", stopScope{}, nil
	}
	return at, reason, scope, nil
}

// lastStep is the last instant at or before at where the charge steps up:
// a run's charge grows by a second the moment that second begins, at its
// start plus a whole number of seconds. Between that step and the next one
// after at, stopping costs the same. The budget's timer fires just after
// it, not at at itself: at lies anywhere inside the last second that fits,
// and a stop requested late in it had only what was left of that second
// for the engine to stop the container before one more second was
// charged; from the step it has (nearly) a whole second.
func lastStep(at time.Time, open []models.UsageInterval) time.Time {
	var last time.Time
	for _, iv := range open {
		d := at.Sub(iv.StartedAt)
		if d <= 0 {
			continue
		}
		// The second in progress at at began here (a whole d: the one
		// that ends at at).
		step := iv.StartedAt.Add((d+time.Second-1)/time.Second*time.Second - time.Second)
		if step.After(last) {
			last = step
		}
	}
	if last.IsZero() {
		return at
	}
	return last
}

// liveRun is a running workbench as the budget sees it: what it costs an
// hour now, and when its minimum charge is used up (a run is charged at
// least the minimum, SPEC §6 rule 3, so until minEnd its charge is already
// committed and does not grow).
type liveRun struct {
	perHour int64
	minEnd  time.Time
}

// secondsUntilSpent is how many whole seconds from now the runs can go on
// before left (the limit not yet used, counting each young run's minimum
// charge in full, as Billing.MonthUsage does) is spent. The part of a
// young run's minimum still ahead is owed whatever happens, and that run
// adds to the spending only once its minimum is used up. Stopping before
// that saves nothing, so when only young runs are left the instant is the
// first end of a minimum (the launch check refuses a run whose minimum the
// budget cannot cover). ok is false when nothing would ever spend.
//
// left once excluded the minimum ahead and this function took it off
// again, after MonthUsage had come to count it: in a run's first minute
// the deadline was early by what was left of its minimum.
func secondsUntilSpent(left int64, now time.Time, runs []liveRun) (secs int64, ok bool) {
	type step struct{ at, perHour int64 } // at: seconds from now
	var rate int64
	var steps []step
	for _, r := range runs {
		if !r.minEnd.After(now) {
			rate += r.perHour
			continue
		}
		// The minimum's seconds not yet begun (60 − ⌈now − start⌉ =
		// ⌊minEnd − now⌋): rounded up, a fractional now put the instant
		// just past minEnd, the timer fired after the run's 61st second
		// had begun, and a run stopped inside its minimum was charged 61 s.
		ahead := int64(r.minEnd.Sub(now) / time.Second)
		steps = append(steps, step{ahead, r.perHour})
	}
	sort.Slice(steps, func(i, j int) bool { return steps[i].at < steps[j].at })
	fit := func() int64 { // seconds left at rate
		switch {
		case left <= 0:
			return 0
		case left >= math.MaxInt64/3600:
			return math.MaxInt32
		}
		return left * 3600 / rate
	}
	var cur int64
	for _, st := range steps {
		if rate > 0 {
			if f := fit(); cur+f < st.at {
				return cur + f, true
			}
			left -= rate * (st.at - cur) / 3600
		}
		cur, rate = st.at, rate+st.perHour
	}
	if rate <= 0 {
		return 0, false
	}
	return cur + fit(), true
}

// nextRateChange is the first rate change after now (zero: none).
func nextRateChange(scheds map[string]pricing.Schedule, now time.Time) time.Time {
	var next time.Time
	for _, s := range scheds {
		for _, r := range s {
			if r.Effective.After(now) && (next.IsZero() || r.Effective.Before(next)) {
				next = r.Effective
			}
		}
	}
	return next
}

// stopForLimit stops uid's running workbenches (only GPU ones when the
// limit is on GPU-hours); their volumes are kept and the reason shown.
func (m *Manager) stopForLimit(ctx context.Context, uid int64, reason string, scope stopScope) {
	running, err := m.store.ListWorkbenches(ctx, uid, models.ActiveStates...)
	if err != nil {
		m.moneyError(ctx, moneyErrEnforcement, fmt.Sprintf("user:%d", uid), err, false)
		return
	}
	// All at once: each charges until its own container exits, so one
	// slow stop must not delay the others.
	var wg sync.WaitGroup
	for _, wb := range running {
		if !scope.stops(&wb) {
			continue
		}
		m.log.Info("quota: stopping at the limit", "id", wb.ID, "user", uid, "reason", reason)
		wg.Go(func() {
			why := reasonf("stopped: %s (your files are kept)", reason)
			if did, err := m.stopTelling(ctx, &wb, why); err != nil {
				m.log.Warn("quota stop", "id", wb.ID, "err", err)
			} else if did {
				m.metrics.culled(CullBudget)
			}
		})
	}
	wg.Wait()
}
