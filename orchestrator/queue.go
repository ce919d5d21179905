package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"workbench/models"
	"workbench/orchestrator/scheduler"
)

// The queue (issue 12 §2; docs/scheduling.md). A launch with Queue set is
// recorded "queued", binding nothing, and costs nothing. Drain places what
// the scheduler says may start, in the same BEGIN IMMEDIATE transaction
// that binds the GPUs; it runs after a launch joins the queue, whenever
// capacity frees (stop, delete, exit found by reconciliation, a failed
// launch) and on a timer (DrainEvery) that also expires old requests and
// ends the grace of preempted runs. The queue lives in SQLite, so a portal
// restart loses nothing: the first drain after it carries on.

// kickDrain drains the queue in the background; kicks while one is
// pending coalesce.
func (m *Manager) kickDrain() {
	if m.closing() {
		return // the next start drains (the queue is in the database)
	}
	if !m.drainPending.CompareAndSwap(false, true) {
		return
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		m.drainPending.Store(false)
		if err := m.Drain(m.life); err != nil && !m.closing() {
			m.log.Warn("queue drain", "err", err)
		}
	}()
}

// placed is a queued workbench the drain moved to requested.
type placed struct {
	id    string
	units []models.Unit
}

// Drain ends the grace of preempted runs that are due, then decides the
// queue: starts what may start, expires what waited too long, tells
// preemptible runs to yield for higher-priority requests, and records
// for every other request its place, estimate and why it waits.
func (m *Manager) Drain(ctx context.Context) error { return m.drain(ctx, "") }

// drain is Drain; launched is the workbench a launch queued just before
// (""), which, placed now, never waited (QueueTx.Place).
func (m *Manager) drain(ctx context.Context, launched string) error {
	m.drainMu.Lock()
	defer m.drainMu.Unlock()
	return m.drainLocked(ctx, launched, nil)
}

// drainLocked is drain with drainMu held; with direct set, launched asked
// not to wait and the drain decides only it (decideDirect), writing the
// outcome to direct.
func (m *Manager) drainLocked(ctx context.Context, launched string, direct *directOutcome) error {
	m.preemptDue(ctx)
	m.releaseNoShows(ctx)
	queued, err := m.store.ListWorkbenches(ctx, 0, models.StateQueued)
	if err != nil {
		return err
	}
	cands, err := m.pool.CandidatesByModel(ctx)
	if err != nil {
		return err
	}
	drained, err := m.pool.DrainedUnits(ctx)
	if err != nil {
		return err
	}
	// What each flavor may be given (candidates of its kind of unit); read
	// outside the transaction like the candidates, re-checked by allocate.
	fls, err := m.store.ListFlavors(ctx, false)
	if err != nil {
		return err
	}
	needs, err := m.pool.Needs(ctx, fls)
	if err != nil {
		return err
	}
	now := m.now() // for fair share; the decisions read the clock under the lock
	// Read outside the transaction (they need the price list and the
	// ledger); a little stale is harmless: the quota is checked again, and
	// usage only orders requests of equal priority.
	months := map[int64]models.MonthUsage{}
	for _, wb := range queued {
		if _, ok := months[wb.OwnerID]; !ok {
			if months[wb.OwnerID], err = m.billing.MonthUsage(ctx, wb.OwnerID); err != nil {
				return err
			}
		}
	}
	minCharges := m.queuedMinCharges(ctx, queued, fls)
	usage, err := m.fairShare(ctx, now)
	if err != nil {
		return err
	}
	var started []placed
	var yield, spared, expired, refused []string
	// Held (read) from the placement's commit until its pipeline is
	// registered, like a launch: reconciliation must not take a placed
	// workbench for an abandoned launch.
	m.accepting.RLock()
	defer m.accepting.RUnlock()
	err = m.store.DrainQueue(ctx, func(q *models.QueueTx) error {
		started, yield, spared, expired, refused = nil, nil, nil, nil, nil
		now = m.now()
		snap, asks, err := m.snapshot(q, cands, needs, now, usage, months, minCharges)
		if err != nil {
			return err
		}
		if err := applyBoosts(q, &snap); err != nil {
			return err
		}
		snap.Drained = drained
		if direct != nil {
			*direct = directOutcome{}
			return decideDirect(q, snap, asks, launched, months, direct)
		}
		for id, a := range asks {
			if a.beyond == nil {
				continue
			}
			if err := q.Leave(id, a.refusedState(), reasonf("refused while it waited: %s", a.beyond.Error())); err != nil {
				return err
			}
			refused = append(refused, id)
		}
		plan := scheduler.Decide(snap)
		for _, id := range plan.Expire {
			wb := asks[id]
			reason := reasonf("expired: waited %s in the queue for %s without a place (the maximum wait); launch again or ask an administrator",
				durationText(m.opt.QueueMaxWait), needText(wb.need))
			if err := q.Leave(id, models.StateStopped, reason); err != nil {
				return err
			}
			expired = append(expired, id)
		}
		for _, id := range plan.Start {
			a := asks[id]
			// Checked again now: an earlier placement in this drain may
			// have used the user's quota.
			if err := q.Check(models.CheckLaunchQuota(a.ask, months[a.ask.UserID])); err != nil {
				if models.WaitableQuota(err) {
					continue // waits; explained on the next drain
				}
				if err := q.Leave(id, a.refusedState(), reasonf("refused when its turn came: %s", err.Error())); err != nil {
					return err
				}
				refused = append(refused, id)
				continue
			}
			gpus, err := q.Place(id, a.need, launched != "" && id == launched)
			var nc *models.NoCapacityError
			if errors.As(err, &nc) {
				return fmt.Errorf("scheduler placed %s beyond capacity: %w", id, err) // a bug: roll back the whole drain
			}
			if err != nil {
				return err
			}
			started = append(started, placed{id: id, units: gpus})
		}
		for _, id := range plan.Preempt {
			if err := q.MarkPreempt(id, now.Add(m.opt.PreemptGrace), preemptFor(plan, id, asks)); err != nil {
				return err
			}
			yield = append(yield, id)
		}
		for _, id := range plan.Rescind {
			ok, err := q.RescindPreempt(id)
			if err != nil {
				return err
			}
			if ok {
				spared = append(spared, id)
			}
		}
		// After the starts: a claimed GPU has every slice held (no start
		// of this drain could take one of it), and from now on none is
		// handed out until the claimant is placed or leaves the queue.
		for id, uuids := range plan.Claim {
			if err := q.Claim(id, uuids); err != nil {
				return err
			}
			m.log.Info("taking shared GPUs whole", "id", id, "gpus", uuids)
		}
		for id, w := range plan.Waiting {
			var est *time.Time
			if !w.EstimatedStart.IsZero() {
				t := w.EstimatedStart
				est = &t
			}
			unknown := ""
			if est == nil {
				unknown = w.NoEstimate
			}
			if err := q.Explain(id, w.Position, w.Ahead, waitText(w), est, unknown); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if direct != nil {
		if direct.placed {
			m.startPlaced(ctx, placed{id: launched, units: direct.units})
		}
		m.kickDrain() // what this drain left undecided
		return nil
	}
	placedIDs := make([]string, 0, len(started))
	for _, p := range started {
		placedIDs = append(placedIDs, p.id)
	}
	m.observeLeft(ctx, QueuePlaced, placedIDs, now)
	m.observeLeft(ctx, QueueExpired, expired, now)
	for _, p := range started {
		m.startPlaced(ctx, p)
	}
	for _, id := range yield {
		m.notifyPreempt(ctx, id, now.Add(m.opt.PreemptGrace))
	}
	for _, id := range spared {
		m.notifySpared(ctx, id)
	}
	// Their owners may have left long ago: the queue is where launches wait.
	for _, id := range expired {
		m.tellOwnerWhy(ctx, id, EventExpired)
	}
	for _, id := range refused {
		m.tellOwnerWhy(ctx, id, EventFailed)
	}
	// Those still waiting: their place and reason may have moved. Not the
	// ones this drain placed, expired or refused — a "queued" after their
	// "requested" told an event stream they were back in the queue.
	left := map[string]bool{}
	for _, ids := range [][]string{placedIDs, expired, refused} {
		for _, id := range ids {
			left[id] = true
		}
	}
	for _, wb := range queued {
		if !left[wb.ID] {
			m.events.Publish(Update{ID: wb.ID, State: models.StateQueued, At: time.Now().UTC()})
		}
	}
	return nil
}

// queuedAsk is what a queued workbench needs to be placed.
type queuedAsk struct {
	need models.GPUNeed
	ask  models.LaunchAsk
	// beyond is set when the ask alone is now more than its owner's quota
	// allows at once (lowered while it waited): no stop can clear that, so
	// the drain refuses it at once instead of holding its place.
	beyond error
	// ran is set for a workbench that has run before (a start or a
	// resume that queued): refused in the queue, it goes back to stopped,
	// home and all, not to failed, which read as if it had run and
	// crashed.
	ran bool
	// class is its priority class's name (the preemption notice's words).
	class string
}

// preemptFor words what the request a victim yields to asks for
// (Workbench.PreemptFor): its class, the units it needs and how many are
// free. The victim's owner read only "a higher-priority launch", and a
// 4-GPU run taken for a launch one GPU short could not tell why.
func preemptFor(plan scheduler.Plan, victim string, asks map[string]queuedAsk) string {
	id, ok := plan.PreemptFor[victim]
	if !ok {
		return ""
	}
	w, ok := plan.Waiting[id]
	if !ok || w.Pool == "" {
		return ""
	}
	return reasonf("priority %s, %d × %s needed, %d free", asks[id].class, w.Need, w.Pool.Label(), w.Free)
}

// refusedState is where a queued workbench refused by the queue goes:
// failed for a launch that never ran, stopped for one that has.
func (a queuedAsk) refusedState() string {
	if a.ran {
		return models.StateStopped
	}
	return models.StateFailed
}

// unitPool is the scheduler pool of a kind of unit ("" kind: whole GPUs).
func unitPool(kind, model, profile string) scheduler.Pool {
	switch kind {
	case models.UnitMIG:
		return scheduler.PoolMIG(model, profile)
	case models.UnitSlice:
		return scheduler.PoolSlice(model)
	}
	return scheduler.PoolGPU(model)
}

// reservationPool is the scheduler pool a booking holds units of.
func reservationPool(r *models.Reservation) scheduler.Pool {
	kind, model, profile := r.PoolKey()
	return unitPool(kind, model, profile)
}

// snapshot builds the scheduler's view inside the drain's transaction:
// one pool per kind of unit (whole GPUs of a model, MIG instances of a
// profile, slices of the shared GPUs of a model), each with its free units
// counted by allocate's own rules, and what holds units in the pool of the
// units it holds.
func (m *Manager) snapshot(q *models.QueueTx, cands map[string][]string, needs map[int64]models.GPUNeed, now time.Time,
	usage map[int64]float64, months map[int64]models.MonthUsage, minCharges map[string]minCharge) (scheduler.Snapshot, map[string]queuedAsk, error) {
	snap := scheduler.Snapshot{Now: now, Free: map[scheduler.Pool]int{}, Usage: usage,
		Policy: scheduler.Policy{Backfill: !m.opt.NoBackfill, Preempt: !m.opt.NoPreempt, FairShareHalfLife: m.opt.FairShareHalfLife,
			PreemptGrace: m.opt.PreemptGrace}}
	for model, uuids := range cands {
		n, err := q.FreeUnits(models.GPUNeed{Kind: models.UnitGPU, Model: model, Candidates: uuids})
		if err != nil {
			return snap, nil, err
		}
		snap.Free[scheduler.PoolGPU(model)] = n
	}
	held, err := q.Held()
	if err != nil {
		return snap, nil, err
	}
	// Containers the portal does not know hold units until the orphan
	// sweep: without them a launch waiting for such a unit was told the
	// next run's end, an hour after the sweep had given it the unit.
	orphans, err := q.OrphanUnits()
	if err != nil {
		return snap, nil, err
	}
	snap.Orphans = orphanReleases(orphans, needs)
	quotaRuntimes := map[int64]time.Duration{}
	quotaRuntime := func(user int64) (time.Duration, error) {
		d, ok := quotaRuntimes[user]
		if !ok {
			d, err = q.QuotaMaxRuntime(user)
			quotaRuntimes[user] = d
		}
		return d, err
	}
	res, err := q.ActiveReservations()
	if err != nil {
		return snap, nil, err
	}
	for _, r := range res {
		snap.Reservations = append(snap.Reservations, scheduler.Reservation{ID: r.ID, User: r.UserID, Holders: r.Holders,
			Pool: reservationPool(&r), Units: r.Units, Start: r.StartsAt, End: r.EndsAt})
	}
	for _, h := range held {
		r := scheduler.Running{ID: h.ID, User: h.OwnerID, Units: h.Units, Priority: h.PriorityRank, Preemptible: h.Preemptible,
			Started: h.CreatedAt, Yielding: h.PreemptAt != nil}
		if h.PreemptAt != nil {
			r.YieldsAt = *h.PreemptAt
		}
		if h.Units > 0 {
			r.Pool = unitPool(h.UnitKind, h.GPUModel, h.MIGProfile)
		}
		if h.StartedAt != nil {
			r.Started = *h.StartedAt
		}
		// The run ends by the limit the culler applies: the flavor's (with
		// "+1 h" bumps) or the owner's quota's, whichever is shorter.
		rule := RuntimeRule{Flavor: time.Duration(h.MaxRuntimeS) * time.Second, Extension: time.Duration(h.RuntimeExtensionS) * time.Second}
		if h.Units > 0 {
			if rule.Quota, err = quotaRuntime(h.OwnerID); err != nil {
				return snap, nil, err
			}
		}
		if limit, _ := rule.Limit(); limit > 0 {
			begin := now
			if h.StartedAt != nil && h.State == models.StateRunning {
				begin = *h.StartedAt
			}
			r.EndsBy = begin.Add(limit)
		}
		// Its owner's monthly limit stops it sooner where that is
		// forecast: bob's launch read "Estimated start: unknown" while
		// alice's page said her limit stopped the run at 21:18.
		if st, ok := m.budgetStopOf(h.OwnerID, h.ID, h.Units > 0 && countsGPUHours(h.UnitKind)); ok && (r.EndsBy.IsZero() || st.at.Before(r.EndsBy)) {
			r.EndsBy = st.at
		}
		snap.Running = append(snap.Running, r)
	}
	queued, err := q.Queued()
	if err != nil {
		return snap, nil, err
	}
	var pins []int64
	for _, w := range queued {
		if w.ReservationID != nil {
			pins = append(pins, *w.ReservationID)
		}
	}
	pinned, err := q.ReservationsByID(pins)
	if err != nil {
		return snap, nil, err
	}
	// Shared GPUs a whole-GPU launch may take whole (ChooseShared): their
	// slices, holders and claims, read in the transaction.
	holders, err := q.SliceHolders()
	if err != nil {
		return snap, nil, err
	}
	sliceCount, err := q.SharedSlices()
	if err != nil {
		return snap, nil, err
	}
	bound, err := q.Allocated()
	if err != nil {
		return snap, nil, err
	}
	claimedBy := map[string]string{}
	for _, w := range queued {
		for _, g := range w.Claims() {
			claimedBy[g] = w.ID
		}
	}
	seenShared := map[string]bool{}
	asks := map[string]queuedAsk{}
	for _, w := range queued {
		need, ok := needs[w.FlavorID]
		if !ok { // a flavor made after this drain read them: the next drain places it
			continue
		}
		// The image and flavor were allowed when it joined the queue; only
		// the limits that change with time are checked at placement.
		ask := models.LaunchAsk{UserID: w.OwnerID, GPUModel: w.GPUModel, GPUs: w.GPUCount, Kind: need.Kind, IdleTimeout: time.Duration(w.IdleTimeoutS) * time.Second,
			Placing: true, Currency: m.opt.Currency}
		if mc, ok := minCharges[w.ID]; ok {
			ask.MinChargeMicros, ask.MinChargeSecs = mc.micros, mc.seconds
		}
		r := scheduler.Request{ID: w.ID, User: w.OwnerID, Units: w.GPUCount, Priority: w.PriorityRank, Preemptible: w.Preemptible,
			MaxRuntime: time.Duration(w.MaxRuntimeS) * time.Second}
		if w.QueuedAt != nil {
			r.Arrived = *w.QueuedAt
		}
		if w.QueueExpiresAt != nil {
			r.Expires = *w.QueueExpiresAt
		}
		if w.GPUCount > 0 {
			r.Pool = unitPool(need.Kind, w.GPUModel, w.MIGProfile)
			if need.NeverFits() {
				// The server's layout changed since it queued (a GPU split
				// into MIG instances): it keeps its place but holds back
				// nobody behind it (a blocked request casts no shadow).
				r.Blocked = reasonf("needs %d units at once; this server has %d now (GPUs split into MIG instances do not count as whole ones; shared ones do): it waits until an admin changes that", w.GPUCount, need.Structural)
				r.BlockedCode = scheduler.NoEstimateServerLayout
				if need.Kind == models.UnitSlice {
					r.Blocked = reasonf("needs a slice of a shared %s, and no GPU of that model is shared on this server: it waits until an administrator shares one on the GPUs page", need.Model)
				}
			}
			if _, seen := snap.Free[r.Pool]; !seen {
				n, err := q.FreeUnits(need)
				if err != nil {
					return snap, nil, err
				}
				snap.Free[r.Pool] = n
			}
			for _, g := range need.Lend {
				if !seenShared[g] && sliceCount[g] > 0 {
					seenShared[g] = true
					snap.Shared = append(snap.Shared, scheduler.SharedGPU{UUID: g, Pool: r.Pool, SlicePool: scheduler.PoolSlice(w.GPUModel),
						Slices: sliceCount[g], Holders: holders[g], ClaimedBy: claimedBy[g]})
				}
			}
			for _, g := range w.Claims() {
				if slices.Contains(need.Lend, g) {
					r.Claimed++
					if !bound[g] {
						r.Lent++
					}
				}
			}
		}
		// A concurrency limit holds it (keeping its place); an ask alone
		// beyond the quota is refused now (the drain does it); other final
		// refusals (a monthly limit, which a credit can lift) are left to
		// placement, which fails it with the reason when its turn comes.
		err := q.Check(models.CheckLaunchQuota(ask, months[w.OwnerID]))
		var qe *models.QuotaError
		switch {
		case models.WaitableQuota(err):
			r.Blocked = reasonf("waiting for your other workbenches to stop: %s", err.Error())
			r.BlockedCode = scheduler.NoEstimateOwnerQuota
		case errors.As(err, &qe) && qe.Final:
			asks[w.ID] = queuedAsk{need: need, ask: ask, beyond: qe, ran: w.StartedAt != nil, class: w.Priority}
			continue
		}
		// A launch that named a booking waits for its window to open and
		// then uses only it; once the booking is over or released, or its
		// owner left the group it was booked for, it queues like any other
		// launch.
		if w.ReservationID != nil {
			if b, ok := pinned[*w.ReservationID]; ok && b.ReleasedAt == nil && now.Before(b.EndsAt) && b.For(w.OwnerID) {
				r.Reservation = b.ID
				if now.Before(b.StartsAt) && r.Blocked == "" {
					r.Blocked = reasonf("waiting for your reservation #%s, which opens at %s UTC", strconv.FormatInt(b.ID, 10), opensAt(b.StartsAt))
					r.NotBefore = b.StartsAt
				}
			}
		}
		asks[w.ID] = queuedAsk{need: need, ask: ask, ran: w.StartedAt != nil, class: w.Priority}
		snap.Queue = append(snap.Queue, r)
	}
	return snap, asks, nil
}

// fairShare is each user's decayed recent GPU use (GPU-seconds), over ten
// half-lives (older use weighs less than 0.1 %).
func (m *Manager) fairShare(ctx context.Context, now time.Time) (map[int64]float64, error) {
	if m.opt.NoFairShare {
		return map[int64]float64{}, nil
	}
	hl := m.opt.FairShareHalfLife
	spans, err := m.store.GPUSpansSince(ctx, now.Add(-10*hl))
	if err != nil {
		return nil, err
	}
	in := make([]scheduler.Span, 0, len(spans))
	for _, s := range spans {
		sp := scheduler.Span{User: s.UserID, Units: s.GPUCount, Start: s.Started}
		if s.Ended != nil {
			sp.End = *s.Ended
		}
		in = append(in, sp)
	}
	return scheduler.DecayedUsage(in, now, hl), nil
}

// startPlaced runs the launch pipeline of a workbench the drain placed (a
// resumed one reuses its container when its GPUs are the same).
func (m *Manager) startPlaced(ctx context.Context, p placed) {
	wb, err := m.store.WorkbenchByID(ctx, p.id)
	if err == nil {
		var owner *models.User
		var img *models.Image
		var fl *models.Flavor
		if owner, err = m.store.UserByID(ctx, wb.OwnerID); err == nil {
			if img, err = m.store.ImageByID(ctx, wb.ImageID); err == nil {
				if fl, err = m.store.FlavorByID(ctx, wb.FlavorID); err == nil {
					m.log.Info("placed from the queue", "id", wb.ID, "gpus", models.DeviceIDs(p.units))
					m.events.Publish(Update{ID: wb.ID, State: models.StateRequested, At: time.Now().UTC()})
					m.inBackground(wb.ID, func(ctx context.Context) error {
						err := m.restart(ctx, wb, owner.HomeName(), img, fl, p.units)
						if wb.QueuedAt == nil {
							return err
						}
						waited := m.now().Sub(*wb.QueuedAt)
						switch {
						case waited < startedAfterWait: // its owner still watches the page
						case err == nil:
							m.tellOwner(ctx, wb, EventStarted, reasonf("Workbench %s is running: it started after %s in the queue.", wb.Name, durationText(waited)))
						case ctx.Err() == nil && !errors.Is(err, models.ErrStateChanged): // not a stop or delete meanwhile
							m.tellOwner(ctx, wb, EventFailed, reasonf("Workbench %s could not start after %s in the queue: %s", wb.Name, durationText(waited), err.Error()))
						}
						return err
					})
					return
				}
			}
		}
	}
	m.log.Error("start a placed workbench", "id", p.id, "err", err)
	m.inBackground(p.id, func(context.Context) error { return errors.New(reasonf("could not start after its wait: %v", err)) })
}

// needText is "2 × H100 80GB HBM3" (or "1 × slice of a shared …").
func needText(n models.GPUNeed) string {
	if n.Count == 0 {
		return reasonf("a place")
	}
	return fmt.Sprintf("%d × %s", n.Count, unitPool(n.Kind, n.Model, n.Profile).Label())
}

// EstimateUnknownCode is why a queued workbench has no estimated start, as
// a stable code (a scheduler.NoEstimate… value: the API's
// estimated_start_reason_code), when the queue knows; "" when it does
// not, or when it has an estimate.
func EstimateUnknownCode(wb *models.Workbench) string {
	if wb.State != models.StateQueued || wb.EstimatedStart != nil {
		return ""
	}
	if wb.EstimateUnknown == models.EstimateNoMaxRuntime {
		// Stored by a drain before the codes; the next drain rewrites it.
		return scheduler.NoEstimateHeldWithoutEnd
	}
	if EstimateUnknownText(wb) == "" {
		return "" // a code this version does not know
	}
	return wb.EstimateUnknown
}

// EstimateUnknownText says why a queued workbench has no estimated start,
// as a clause (EstimateUnknownCode's words: the page writes it after
// "Estimated start: unknown — ", the API gives it as
// estimated_start_reason), when the queue knows; "" when it does not, or
// when it has an estimate.
func EstimateUnknownText(wb *models.Workbench) string {
	if wb.State != models.StateQueued || wb.EstimatedStart != nil {
		return ""
	}
	switch wb.EstimateUnknown {
	case scheduler.NoEstimateHeldWithoutEnd, models.EstimateNoMaxRuntime:
		return reasonf("the workbenches holding these GPUs have no maximum runtime")
	case scheduler.NoEstimateOutOfService:
		return reasonf("it needs GPUs that are out of service (drained by an administrator)")
	case scheduler.NoEstimateOwnerQuota:
		return reasonf("it waits for its owner's other workbenches to stop (a quota limit)")
	case scheduler.NoEstimateServerLayout:
		return reasonf("this server has no GPUs it can take until an administrator changes that")
	case scheduler.NoEstimateQueueAhead:
		return reasonf("the requests ahead of it need these GPUs first, and when they will be done is not known")
	}
	return ""
}

// ReasonForOthers is a queue reason as someone other than the owner reads
// it (the admin queue, the queue on /gpus): without waitText's "you are
// next" / "N workbenches ahead of you", which speak to the owner; the
// position is its own column there.
func ReasonForOthers(reason string) string {
	i := strings.LastIndex(reason, "; ")
	if i < 0 {
		return reason
	}
	tail := reason[i+2:]
	if tail == "you are next" || tail == "1 workbench ahead of you" ||
		strings.HasSuffix(tail, " workbenches ahead of you") && strings.Trim(strings.TrimSuffix(tail, " workbenches ahead of you"), "0123456789") == "" {
		return reason[:i]
	}
	return reason
}

// ReasonForPublic is a queue reason as another user reads it (the queue on
// /gpus, GET /api/v1/queue): ReasonForOthers, and a wait on the owner's
// own quota or booking says only that, not the owner's limits and holdings
// addressed as "your" to the reader.
func ReasonForPublic(reason string) string {
	switch {
	case strings.HasPrefix(reason, waitOwnQuota):
		return reasonf("waiting for its owner's other workbenches to stop (a quota limit)")
	case strings.HasPrefix(reason, waitOwnBooking):
		return reasonf("waiting for its owner's reservation to open")
	}
	return ReasonForOthers(reason)
}

// The beginnings of the queue reasons of a request that waits on its owner
// alone (the snapshot's Blocked texts above): its owner's quota, or its
// owner's booking that has not opened.
const (
	waitOwnQuota   = "waiting for your other workbenches to stop"
	waitOwnBooking = "waiting for your reservation #"
)

// WaitsOnOwnerAlone reports whether a queued request's reason says it waits
// on its owner alone (their quota or their own booking): it takes no free
// unit now and holds back nobody.
func WaitsOnOwnerAlone(reason string) bool {
	return strings.HasPrefix(reason, waitOwnQuota) || strings.HasPrefix(reason, waitOwnBooking)
}

// waitText is the explanation a queued workbench shows.
func waitText(w scheduler.Wait) string {
	switch w.Ahead {
	case 0:
		return reasonf("%s; you are next", w.Reason)
	case 1:
		return reasonf("%s; 1 workbench ahead of you", w.Reason)
	}
	return reasonf("%s; %d workbenches ahead of you", w.Reason, w.Ahead)
}

// cancelQueued takes a queued workbench out of the queue (a stop of a
// queued workbench). It reports false when it was placed meanwhile (the
// caller stops it the usual way).
func (m *Manager) cancelQueued(ctx context.Context, id, reason string) (bool, error) {
	if reason == "" {
		reason = reasonf("left the queue before it started (cancelled); nothing was charged")
	}
	err := m.store.LeaveQueue(ctx, id, models.StateStopped, reason)
	if errors.Is(err, models.ErrConflict) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	m.observeLeft(ctx, QueueCancelled, []string{id}, m.now())
	m.forgetRoute(id)
	m.events.Publish(Update{ID: id, State: models.StateStopped, Reason: reason, At: time.Now().UTC()})
	m.kickDrain() // positions of the others moved
	return true, nil
}

// opensAt writes when a booking opens as the booking pages do, to the
// minute ("2026-12-07 10:00"); with its seconds only when it has some (a
// window begun when it was booked): the queue said "10:00:00" where the
// refusal and the estimated start said "10:00".
func opensAt(t time.Time) string {
	if t = t.UTC(); t.Second() == 0 && t.Nanosecond() == 0 {
		return t.Format("2006-01-02 15:04")
	}
	return t.Format("2006-01-02 15:04:05")
}
