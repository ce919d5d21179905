// Package scheduler decides, from a snapshot of the queue and of what runs,
// which queued requests start now, which wait (and why, and until about
// when), which expire and which preemptible runs must yield. It is pure: no
// database, no engine, no wall clock (the snapshot carries Now), so the
// portal's drainer and a simulator run the same code.
//
// Units: a request asks for Count units of one Pool: "gpu|<model>" (whole
// GPUs), "mig|<profile>|<model>" (MIG instances of a profile) or
// "slice|<model>" (slices of shared GPUs). Fit is the one placement test;
// everything else reasons in units needed vs free.
package scheduler

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// Pool names a kind of unit: "gpu|NVIDIA H100 80GB HBM3". A request with no
// units (a CPU-only flavor) has Pool "" and always fits.
type Pool string

// PoolGPU is the pool of whole GPUs of a model.
func PoolGPU(model string) Pool { return Pool("gpu|" + model) }

// PoolMIG is the pool of MIG instances of a profile on GPUs of a model
// (the model is part of it: a 1g.10gb of an A100 is not one of an H100).
func PoolMIG(model, profile string) Pool { return Pool("mig|" + profile + "|" + model) }

// PoolSlice is the pool of slices of the shared GPUs of a model.
func PoolSlice(model string) Pool { return Pool("slice|" + model) }

// Label is the pool as people read it: "H100 80GB HBM3", "MIG 1g.10gb of
// H100 80GB HBM3", "slice of a shared H100 80GB HBM3".
func (p Pool) Label() string {
	kind, rest, _ := strings.Cut(string(p), "|")
	switch kind {
	case "mig":
		profile, model, _ := strings.Cut(rest, "|")
		return reasonf("MIG %s of %s", profile, strings.TrimPrefix(model, "NVIDIA "))
	case "slice":
		return reasonf("slice of a shared %s", strings.TrimPrefix(rest, "NVIDIA "))
	}
	return strings.TrimPrefix(rest, "NVIDIA ")
}

// Request is one queued launch.
type Request struct {
	ID          string
	User        int64
	Pool        Pool
	Units       int
	Priority    int // higher goes first
	Preemptible bool
	Arrived     time.Time
	// Boosted is when an administrator moved it to the front of its
	// priority (zero: not boosted); the latest boost goes first.
	Boosted time.Time
	// Order is an administrator's explicit place within its priority
	// class (1 first; 0: none): ordered requests go before the others of
	// the class, after boosted ones.
	Order int
	// Expires is when it leaves the queue unplaced (zero: never).
	Expires time.Time
	// MaxRuntime bounds how long it runs once started (0: unknown); backfill
	// needs it.
	MaxRuntime time.Duration
	// Blocked is set when something other than capacity holds it (a
	// concurrency quota): it keeps its place but is skipped.
	Blocked string
	// BlockedCode names what Blocked waits for, as Wait.NoEstimate says
	// it (NoEstimateOwnerQuota, NoEstimateServerLayout): only the caller
	// knows which of its waits Blocked is.
	BlockedCode string
	// Reservation pins it to one of its user's bookings (0: any of them):
	// only that booking's units are its own.
	Reservation int64
	// NotBefore is when its booking's window opens, set with Blocked
	// while the window is ahead (zero: no such wait). The booking holds
	// its units from then, so that is its estimated start.
	NotBefore time.Time
	// Claimed counts the shared GPUs it is taking whole (Plan.Claim of an
	// earlier drain), Lent those of them with no slice bound any more:
	// free for it alone.
	Claimed, Lent int
}

// SharedGPU is a GPU shared in slices that a whole-GPU request of Pool
// may take whole by preempting every one of its slice holders (see
// ChooseShared).
type SharedGPU struct {
	UUID string
	// Pool is the whole-GPU pool it can be lent to; SlicePool the pool of
	// its slices, Slices how many it is shared in.
	Pool, SlicePool Pool
	Slices          int
	// Holders are the running workbenches bound to its slices, one per
	// slice held.
	Holders []string
	// ClaimedBy is the request already taking it whole ("" none).
	ClaimedBy string
}

// Running is one workbench that holds units now.
type Running struct {
	ID          string
	User        int64
	Pool        Pool
	Units       int
	Priority    int
	Preemptible bool
	Started     time.Time
	// EndsBy is when it stops at the latest (its maximum runtime; zero:
	// unknown).
	EndsBy time.Time
	// Yielding is set for a preemptible run already told to yield: its
	// units are on their way back.
	Yielding bool
	// YieldsAt is when a yielding run's grace ends and it is stopped (zero:
	// unknown, its units then count as free for estimates).
	YieldsAt time.Time
}

// Orphan is units of a pool held by a container the portal does not know
// (a restored backup's orphan): neither a request's nor preemptible, they
// come back when the orphan sweep removes the container, at RemoveAt.
type Orphan struct {
	Pool     Pool
	Units    int
	RemoveAt time.Time
}

// Policy tunes the scheduler.
type Policy struct {
	// Backfill lets a later request start before a blocked earlier one of
	// the same pool when it cannot delay it (see docs/scheduling.md).
	Backfill bool
	// Preempt lets a blocked request take the units of lower-priority
	// preemptible runs.
	Preempt bool
	// FairShareHalfLife is the half-life of the recent usage that orders
	// requests of equal priority.
	FairShareHalfLife time.Duration
	// PreemptGrace is how long a run told to yield keeps its units: a
	// request that preempts expects them then (estimates only; zero:
	// unknown).
	PreemptGrace time.Duration
}

// Snapshot is what the scheduler decides on.
type Snapshot struct {
	Now     time.Time
	Free    map[Pool]int
	Queue   []Request
	Running []Running
	// Usage is each user's decayed recent unit-seconds (see DecayedUsage).
	Usage  map[int64]float64
	Policy Policy
	// Reservations book units for a user over a window: while active,
	// the booked units the booker does not use go to nobody else.
	Reservations []Reservation
	// Shared are the shared GPUs a whole-GPU request may take whole.
	Shared []SharedGPU
	// Drained counts the units of a pool an administrator took out of
	// service: a request waiting for them is told so.
	Drained map[Pool]int
	// Orphans hold units until the orphan sweep removes their containers:
	// estimates count them as released then.
	Orphans []Orphan
}

// Reservation is a booking of Units of a Pool for User over [Start, End),
// or, when Holders is not nil, for those users (a group's members; none
// for a group without members).
type Reservation struct {
	ID         int64
	User       int64
	Holders    []int64
	Pool       Pool
	Units      int
	Start, End time.Time
}

// holderIDs are the users who may use it.
func (r Reservation) holderIDs() []int64 {
	if r.Holders == nil {
		return []int64{r.User}
	}
	return r.Holders
}

// holds reports whether user may use it.
func (r Reservation) holds(user int64) bool { return slices.Contains(r.holderIDs(), user) }

// Active reports whether the reservation's window contains t.
func (r Reservation) Active(t time.Time) bool { return !t.Before(r.Start) && t.Before(r.End) }

// reserved tracks, per active reservation, the booked units its user does
// not hold: held back from everyone else.
type reserved struct {
	list []Reservation
	idle []int
	// use is, per reservation of list, the units of each holder's runs
	// it counts as used.
	use []map[int64]int
}

// userPool keys a user's units of a pool.
func userPool(u int64, p Pool) string { return fmt.Sprintf("%d|%s", u, p) }

func newReserved(s Snapshot) *reserved {
	rs := &reserved{}
	held := map[string]int{} // user|pool → units held
	for _, r := range s.Running {
		held[userPool(r.User, r.Pool)] += r.Units
	}
	for _, r := range s.Reservations {
		if !r.Active(s.Now) {
			continue
		}
		use := 0
		by := map[int64]int{}
		for _, u := range r.holderIDs() {
			k := userPool(u, r.Pool)
			take := min(held[k], r.Units-use)
			held[k] -= take
			use += take
			by[u] += take
		}
		rs.list = append(rs.list, r)
		rs.idle = append(rs.idle, r.Units-use)
		rs.use = append(rs.use, by)
	}
	return rs
}

// forVictims is running as preemption sees it for r: units that an active
// booking r's owner does not share counts as its holders' go back to that
// booking when their run stops, not to r, so they are left out of the
// run's units. Preempting a booker's run inside its own booking freed
// nothing for r, and its auto-resume took the units straight back: the
// run was preempted every grace period for as long as the booking lasted.
// A holder's booked units are counted against its runs that preemption
// takes last — those that cannot be preempted, then the oldest.
func (rs *reserved) forVictims(running []Running, r Request) []Running {
	cover := map[string]int{} // user|pool → units booked away from r
	for i, b := range rs.list {
		if b.holds(r.User) {
			continue
		}
		for u, n := range rs.use[i] {
			cover[userPool(u, b.Pool)] += n
		}
	}
	if len(cover) == 0 {
		return running
	}
	out := slices.Clone(running)
	order := make([]int, len(out))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := out[order[i]], out[order[j]]
		if a.Preemptible != b.Preemptible {
			return !a.Preemptible
		}
		return a.Started.Before(b.Started)
	})
	for _, i := range order {
		k := userPool(out[i].User, out[i].Pool)
		n := min(cover[k], out[i].Units)
		out[i].Units -= n
		cover[k] -= n
	}
	return out
}

// forOthers is what pool's reservations hold back from user; own what they
// keep for user.
func (rs *reserved) forOthers(pool Pool, user int64) int {
	n := 0
	for i, r := range rs.list {
		if r.Pool == pool && !r.holds(user) {
			n += rs.idle[i]
		}
	}
	return n
}

func (rs *reserved) own(pool Pool, user, pin int64) int {
	n := 0
	for i, r := range rs.list {
		if r.Pool == pool && r.holds(user) && (pin == 0 || r.ID == pin) {
			n += rs.idle[i]
		}
	}
	return n
}

// take uses units of user's own reservations of pool first (of the pinned
// one only, when pin is set).
func (rs *reserved) take(pool Pool, user, pin int64, units int) {
	for i, r := range rs.list {
		if units == 0 {
			return
		}
		if r.Pool == pool && r.holds(user) && (pin == 0 || r.ID == pin) {
			n := min(units, rs.idle[i])
			rs.idle[i] -= n
			units -= n
		}
	}
}

// Wait explains why a request is still queued.
type Wait struct {
	Position int // 1-based in the order of its pool
	Ahead    int // requests of the same pool before it
	Need     int
	Free     int
	Pool     Pool
	// EstimatedStart is when it should start (zero: unknown, because what
	// runs has no maximum runtime).
	EstimatedStart time.Time
	Reason         string
	// HeldWithoutEnd is set, with no EstimatedStart, when what it needs
	// is held by runs with no known end (no maximum runtime): counting
	// them it would fit, so that is why there is no estimate.
	HeldWithoutEnd bool
	// NoEstimate says why EstimatedStart is zero, as one of the
	// NoEstimate codes (the API's estimated_start_reason_code); "" with
	// an estimate.
	NoEstimate string
}

// Why a waiting request has no estimated start. The values are the API's
// estimated_start_reason_code: stable, documented in README.md.
const (
	// NoEstimateHeldWithoutEnd: counting every release it would fit, but
	// some of what it needs is held by runs with no maximum runtime.
	NoEstimateHeldWithoutEnd = "held_without_end"
	// NoEstimateOutOfService: it needs more units than its pool has in
	// service; it waits for drained GPUs to come back.
	NoEstimateOutOfService = "out_of_service"
	// NoEstimateOwnerQuota: its owner's concurrency quota holds it until
	// their other workbenches stop (Request.BlockedCode).
	NoEstimateOwnerQuota = "owner_quota"
	// NoEstimateServerLayout: this server has no units it could ever take
	// now (a GPU split into MIG instances, no GPU of its model shared)
	// until an administrator changes that (Request.BlockedCode).
	NoEstimateServerLayout = "server_layout"
	// NoEstimateQueueAhead: even every unit in use freeing up would not be
	// enough for it together with the requests ahead of it (and the units
	// bookings hold back); the estimate does not play the queue forward.
	NoEstimateQueueAhead = "queue_ahead"
)

// Plan is what to do now.
type Plan struct {
	Start   []string // in order
	Expire  []string // left the queue unplaced (past Expires)
	Preempt []string // preemptible runs to tell to yield
	// PreemptFor names, per run in Preempt, the request it yields to (its
	// Wait says how many units it needs and how many are free).
	PreemptFor map[string]string
	// Rescind lists runs told to yield in an earlier drain that no request
	// needs any more (it left the queue, or got other units): they keep
	// running, as if never told.
	Rescind []string
	// Claim names, per request, the shared GPUs it takes whole once their
	// slice holders (in Preempt) have stopped.
	Claim   map[string][]string
	Waiting map[string]Wait // the rest, by id
	Order   []string        // the whole queue as ordered (without expired)
}

// Fit is the one placement test: can need units of a pool be placed with
// free units free, and if not, why.
func Fit(pool Pool, need, free int) (bool, string) {
	if need <= 0 || pool == "" {
		return true, ""
	}
	if need <= free {
		return true, ""
	}
	return false, reasonf("%d × %s needed; %d free", need, pool.Label(), free)
}

// Less orders two requests: priority first, then an administrator's boost
// (the latest first), then an administrator's explicit order, then the
// user with less recent usage, then arrival (then id, so the order is
// total).
func Less(a, b Request, usage map[int64]float64) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if !a.Boosted.Equal(b.Boosted) {
		return a.Boosted.After(b.Boosted)
	}
	if (a.Order > 0) != (b.Order > 0) {
		return a.Order > 0
	}
	if a.Order != b.Order {
		return a.Order < b.Order
	}
	ua, ub := usage[a.User], usage[b.User]
	if ua != ub && math.Abs(ua-ub) > 1e-9 {
		return ua < ub
	}
	if !a.Arrived.Equal(b.Arrived) {
		return a.Arrived.Before(b.Arrived)
	}
	return a.ID < b.ID
}

// Order sorts the queue (a copy).
func Order(q []Request, usage map[int64]float64) []Request {
	out := append([]Request(nil), q...)
	sort.SliceStable(out, func(i, j int) bool { return Less(out[i], out[j], usage) })
	return out
}

// Decide computes the plan for a snapshot.
func Decide(s Snapshot) Plan {
	p := Plan{Waiting: map[string]Wait{}, Claim: map[string][]string{}, PreemptFor: map[string]string{}}
	free := map[Pool]int{}
	for k, v := range s.Free {
		free[k] = v
	}
	var live []Request
	for _, r := range s.Queue {
		if !r.Expires.IsZero() && !s.Now.Before(r.Expires) {
			p.Expire = append(p.Expire, r.ID)
			continue
		}
		live = append(live, r)
	}
	ordered := Order(live, s.Usage)
	// Release times of what holds units, per pool, including what this
	// plan starts (at its maximum runtime).
	releases := map[Pool][]release{}
	for _, r := range s.Running {
		releases[r.Pool] = append(releases[r.Pool], release{at: r.releaseAt(), units: r.Units})
	}
	for _, o := range s.Orphans {
		releases[o.Pool] = append(releases[o.Pool], release{at: o.RemoveAt, units: o.Units})
	}
	// shadow is, per pool, the first blocked request's reservation: the
	// time it is expected to start and the units left over for others then.
	type shadow struct {
		at    time.Time
		extra int
	}
	shadows := map[Pool]*shadow{}
	ahead := map[Pool]int{}
	// needAhead is, per pool, the units wanted by blocked requests before
	// this one (for estimates).
	needAhead := map[Pool]int{}
	// yielding is, per pool, the units of runs told to yield (no other run
	// need be preempted for them); yieldingUnknown those of runs whose stop
	// time is unknown, which estimates count as free now (the others are
	// releases at their stop time).
	yielding, yieldingUnknown := map[Pool]int{}, map[Pool]int{}
	for _, r := range s.Running {
		if r.Yielding {
			yielding[r.Pool] += r.Units
			if r.YieldsAt.IsZero() {
				yieldingUnknown[r.Pool] += r.Units
			}
		}
	}
	claimed := claimedReleases(s)
	// heads are, per pool, the first blocked request and how many yielding
	// units it still counts on; the other yielding runs are rescinded.
	heads := map[Pool]head{}
	preempted := map[string]bool{}
	res := newReserved(s)
	for _, r := range ordered {
		p.Order = append(p.Order, r.ID)
		pos := ahead[r.Pool] + 1
		// Free units beyond what reservations hold back from this user;
		// a booker may also take free units up to its own unused booking
		// (when free units are fewer than all bookings unused, bookers
		// get them in queue order).
		held, own := res.forOthers(r.Pool, r.User), res.own(r.Pool, r.User, r.Reservation)
		avail := max(free[r.Pool]-held, min(free[r.Pool], own), 0)
		// Shared GPUs it claimed whose holders have gone are its alone.
		avail += r.Lent
		// short is how many more units the pool must free before r fits:
		// with bookings holding units back from r, a unit that frees up
		// goes to the booker first, so preemption and the estimate count
		// those too (heldShort: the part beyond r.Units - avail).
		short := shortOf(r, free[r.Pool], held, own)
		heldShort := short - max(r.Units-avail, 0)
		ok, why := Fit(r.Pool, r.Units, avail)
		if !ok && held > 0 {
			why = reasonf("%s (%d reserved for someone else now)", why, held)
		}
		if !ok && s.Drained[r.Pool] > 0 && r.Units > inService(s, r.Pool) {
			// Not even every run stopping would make room: it waits for
			// a drained GPU to come back.
			why = reasonf("%s; %d out of service (drained by an administrator)", why, s.Drained[r.Pool])
		}
		if ok && r.Blocked == "" {
			sh := shadows[r.Pool]
			switch {
			case sh == nil:
			case res.own(r.Pool, r.User, r.Reservation) >= r.Units:
				// Its own booked units: nobody before it could use them.
				// Nobody of this pool is blocked before it.
			case !s.Policy.Backfill:
				ok, why = false, reasonf("waiting behind an earlier request of the same GPUs (no backfill)")
			case r.MaxRuntime > 0 && !sh.at.IsZero() && !s.Now.Add(r.MaxRuntime).After(sh.at):
				// Ends before the blocked request can start: no delay.
			case r.Units <= sh.extra:
				// Uses units the blocked request will not need then.
				sh.extra -= r.Units
			default:
				ok, why = false, reasonf("would delay an earlier request that waits for the same GPUs")
			}
		}
		if r.Blocked != "" {
			ok, why = false, r.Blocked
		}
		if ok {
			p.Start = append(p.Start, r.ID)
			if r.Pool != "" {
				pooled := max(r.Units-r.Lent, 0) // the lent GPUs are bound first
				res.take(r.Pool, r.User, r.Reservation, pooled)
				free[r.Pool] -= pooled
				end := time.Time{}
				if r.MaxRuntime > 0 {
					end = s.Now.Add(r.MaxRuntime)
				}
				releases[r.Pool] = append(releases[r.Pool], release{at: end, units: r.Units})
			}
			continue
		}
		ahead[r.Pool]++
		est := estimate(s.Now, avail+yieldingUnknown[r.Pool], needAhead[r.Pool]+r.Units+heldShort, slices.Concat(releases[r.Pool], claimed[r.ID]))
		withoutEnd := est.IsZero() && heldWithoutEnd(avail+yieldingUnknown[r.Pool], needAhead[r.Pool]+r.Units+heldShort, slices.Concat(releases[r.Pool], claimed[r.ID]))
		if r.NotBefore.After(s.Now) {
			est = r.NotBefore
		} else if r.Blocked != "" {
			// It waits on what the pool's releases do not tell (its
			// owner's other workbenches stopping, an admin changing the
			// server's layout): no estimate rather than one that trails
			// the clock.
			est = time.Time{}
		}
		if r.Blocked == "" {
			needAhead[r.Pool] += r.Units
		}
		if shadows[r.Pool] == nil && r.Blocked == "" {
			extra := 0
			if !est.IsZero() {
				extra = availableAt(est, free[r.Pool], releases[r.Pool]) - r.Units
			}
			shadows[r.Pool] = &shadow{at: est, extra: max(extra, 0)}
			// Preemption: only the first blocked request of a pool, and
			// only for units it cannot get otherwise.
			if s.Policy.Preempt && r.Blocked == "" && r.Pool != "" {
				deficit := short - yielding[r.Pool] - (r.Claimed - r.Lent)
				heads[r.Pool] = head{priority: r.Priority, units: max(short-(r.Claimed-r.Lent), 0)}
				if r.Claimed > r.Lent {
					why = reasonf("%s; preemptible work is yielding a shared GPU to it", why)
				} else if yielding[r.Pool] > 0 && deficit <= 0 {
					// Told to yield in an earlier drain: still the reason.
					why = reasonf("%s; preemptible work is yielding its GPUs", why)
				}
				if deficit > 0 {
					victims := ChooseVictims(res.forVictims(s.Running, r), r, deficit, preempted)
					var claim []string
					if victims == nil {
						victims, claim = ChooseShared(s, r, deficit, preempted)
					}
					for _, v := range victims {
						preempted[v] = true
						p.Preempt = append(p.Preempt, v)
						p.PreemptFor[v] = r.ID
					}
					// What the victims give back comes when their grace
					// ends: the estimate, and the shadow later requests
					// must not delay, count it then.
					if freed := freedFor(s, r.Pool, victims, claim); freed > 0 && s.Policy.PreemptGrace > 0 {
						releases[r.Pool] = append(releases[r.Pool], release{at: s.Now.Add(s.Policy.PreemptGrace), units: freed})
						est = estimate(s.Now, avail+yieldingUnknown[r.Pool], needAhead[r.Pool]+heldShort, releases[r.Pool])
						if r.NotBefore.After(est) {
							est = r.NotBefore
						}
						if !est.IsZero() {
							sh := shadows[r.Pool]
							sh.at, sh.extra = est, max(availableAt(est, free[r.Pool], releases[r.Pool])-r.Units, 0)
						}
					}
					if len(claim) > 0 {
						p.Claim[r.ID] = claim
						why = reasonf("%s; preemptible work is yielding its GPUs (a shared GPU, taken whole)", why)
					} else if len(victims) > 0 {
						why = reasonf("%s; preemptible work is yielding its GPUs", why)
					}
				}
			}
		}
		w := Wait{Position: pos, Ahead: pos - 1, Need: r.Units, Free: avail, Pool: r.Pool, EstimatedStart: est, Reason: why,
			HeldWithoutEnd: withoutEnd && est.IsZero() && r.Blocked == ""}
		if est.IsZero() {
			w.NoEstimate = noEstimate(s, r, w.HeldWithoutEnd)
		}
		p.Waiting[r.ID] = w
	}
	if s.Policy.Preempt {
		p.Rescind = rescind(s, live, heads)
	}
	return p
}

// noEstimate is why waiting request r has no estimated start (a NoEstimate
// code): what blocks it, else drained GPUs it cannot do without, else runs
// with no known end, else the requests ahead of it. Never "": every
// request left without an estimate gets a reason a client can act on.
func noEstimate(s Snapshot, r Request, heldWithoutEnd bool) string {
	switch {
	case r.Blocked != "" && r.BlockedCode != "":
		return r.BlockedCode
	case r.Blocked != "":
		return NoEstimateOwnerQuota // the caller named no code: its common wait
	case s.Drained[r.Pool] > 0 && r.Units > inService(s, r.Pool):
		return NoEstimateOutOfService
	case heldWithoutEnd:
		return NoEstimateHeldWithoutEnd
	}
	return NoEstimateQueueAhead
}

// shortOf is how many more free units a pool with free units must have
// before r fits (0 when it fits), with held units of the pool booked by
// others and own of r's owner's booking unused: r's units beyond the shared
// GPUs lent to it, plus the held ones, unless its own booking covers it.
func shortOf(r Request, free, held, own int) int {
	need := r.Units - r.Lent + held
	if own+r.Lent >= r.Units {
		need = min(need, r.Units-r.Lent)
	}
	return max(need-free, 0)
}

// head is a pool's first blocked request as rescind sees it: its priority
// and the units it lacks beyond what is free.
type head struct {
	priority, units int
}

// rescind picks the yielding runs no waiting request needs: per pool, those
// beyond the units its first blocked request lacks, or not below it in
// priority (it could not have preempted them); the ones that yield soonest
// are kept. A slice holder yielding so that a request still waiting can
// take its shared GPU whole is kept.
func rescind(s Snapshot, live []Request, heads map[Pool]head) []string {
	waiting := map[string]bool{}
	for _, r := range live {
		waiting[r.ID] = true
	}
	forClaim := map[string]bool{}
	for _, g := range s.Shared {
		if g.ClaimedBy != "" && waiting[g.ClaimedBy] {
			for _, h := range g.Holders {
				forClaim[h] = true
			}
		}
	}
	var ys []Running
	for _, r := range s.Running {
		if r.Yielding && !forClaim[r.ID] {
			ys = append(ys, r)
		}
	}
	sort.SliceStable(ys, func(i, j int) bool {
		if !ys[i].YieldsAt.Equal(ys[j].YieldsAt) {
			return ys[i].YieldsAt.Before(ys[j].YieldsAt)
		}
		return ys[i].ID < ys[j].ID
	})
	var out []string
	kept := map[Pool]int{}
	for _, r := range ys {
		if h, ok := heads[r.Pool]; ok && r.Priority < h.priority && kept[r.Pool] < h.units {
			kept[r.Pool] += r.Units
			continue
		}
		out = append(out, r.ID)
	}
	return out
}

type release struct {
	at    time.Time // zero: unknown
	units int
}

// releaseAt is when a running workbench gives its units back at the
// latest: its maximum runtime's end, or its grace's end when it yields.
func (r Running) releaseAt() time.Time {
	if r.Yielding && !r.YieldsAt.IsZero() && (r.EndsBy.IsZero() || r.YieldsAt.Before(r.EndsBy)) {
		return r.YieldsAt
	}
	return r.EndsBy
}

// lastOf is the latest of the holders' stop times; zero when one is unknown.
func lastOf(holders []string, ends map[string]time.Time) time.Time {
	var last time.Time
	for _, h := range holders {
		t := ends[h]
		if t.IsZero() {
			return time.Time{}
		}
		if t.After(last) {
			last = t
		}
	}
	return last
}

// freedFor counts the units of pool that preempting victims (and taking
// the claimed shared GPUs whole) gives back.
func freedFor(s Snapshot, pool Pool, victims, claim []string) int {
	n := len(claim)
	chosen := map[string]bool{}
	for _, v := range victims {
		chosen[v] = true
	}
	for _, r := range s.Running {
		if chosen[r.ID] && r.Pool == pool {
			n += r.Units
		}
	}
	return n
}

// claimedReleases are, per request, the shared GPUs it already claims
// whose slice holders are still yielding: each is its own when the last
// holder has stopped (unknown when a holder's stop time is).
func claimedReleases(s Snapshot) map[string][]release {
	out := map[string][]release{}
	var ends map[string]time.Time
	for _, g := range s.Shared {
		if g.ClaimedBy == "" || len(g.Holders) == 0 {
			continue
		}
		if ends == nil {
			ends = map[string]time.Time{}
			for _, r := range s.Running {
				ends[r.ID] = r.releaseAt()
			}
		}
		out[g.ClaimedBy] = append(out[g.ClaimedBy], release{at: lastOf(g.Holders, ends), units: 1})
	}
	return out
}

// estimate is when units become free for want units (counting what
// requests ahead need), from the known release times; zero when unknown.
func estimate(now time.Time, free, want int, rel []release) time.Time {
	if want <= free {
		return now
	}
	known := make([]release, 0, len(rel))
	for _, r := range rel {
		if !r.at.IsZero() {
			known = append(known, r)
		}
	}
	sort.Slice(known, func(i, j int) bool { return known[i].at.Before(known[j].at) })
	have := free
	for _, r := range known {
		have += r.units
		if have >= want {
			if r.at.Before(now) {
				return now
			}
			return r.at
		}
	}
	return time.Time{}
}

// heldWithoutEnd reports whether want units would be had with every
// release counted, those of unknown time too: then only runs with no
// known end (no maximum runtime) stand between the request and an
// estimate, and a page can say so rather than a bare "unknown".
func heldWithoutEnd(free, want int, rel []release) bool {
	have := free
	for _, r := range rel {
		have += r.units
	}
	return have >= want
}

// availableAt is how many units are free at t given what is free now and
// the known releases.
func availableAt(t time.Time, free int, rel []release) int {
	n := free
	for _, r := range rel {
		if !r.at.IsZero() && !r.at.After(t) {
			n += r.units
		}
	}
	return n
}

// ChooseVictims picks preemptible runs of the request's pool, of lower
// priority, to free deficit units: the fewest units wasted first (units
// freed beyond the deficit), then the newest. Non-preemptible work is never
// chosen; taken lists runs already chosen. It returns nil when even all of
// them would not free enough (preempting then would waste work for nothing).
func ChooseVictims(running []Running, r Request, deficit int, taken map[string]bool) []string {
	var cands []Running
	for _, v := range running {
		if v.Preemptible && !v.Yielding && !taken[v.ID] && v.Pool == r.Pool && v.Priority < r.Priority && v.Units > 0 {
			cands = append(cands, v)
		}
	}
	total := 0
	for _, v := range cands {
		total += v.Units
	}
	if total < deficit {
		return nil
	}
	// Newest first; then take greedily, and prefer one run that covers the
	// deficit alone with the least waste.
	sort.SliceStable(cands, func(i, j int) bool {
		if !cands[i].Started.Equal(cands[j].Started) {
			return cands[i].Started.After(cands[j].Started)
		}
		return cands[i].ID < cands[j].ID
	})
	best := -1
	for i, v := range cands {
		if v.Units >= deficit && (best < 0 || v.Units < cands[best].Units) {
			best = i
		}
	}
	if best >= 0 && cands[best].Units == deficit {
		return []string{cands[best].ID}
	}
	var out []string
	got := 0
	for _, v := range cands {
		if got >= deficit {
			break
		}
		out = append(out, v.ID)
		got += v.Units
	}
	if best >= 0 && cands[best].Units-deficit <= got-deficit {
		return []string{cands[best].ID}
	}
	return out
}

// ChooseShared frees deficit whole GPUs for r when the preemptible runs of
// its own pool cannot (ChooseVictims found too few): every one of them,
// and for the rest shared GPUs of r's model taken whole, each by
// preempting ALL its slice holders. A shared GPU qualifies only when every
// one of its slices is held, every holder preemptible, of lower priority
// than r and not already yielding or chosen, nobody else claims it, and no
// reservation of its slices is active (booked slices stay slices). A
// shared GPU with a free slice is not taken: free slices are for slice
// launches, and only preemptible work is displaced (and no slice launch
// of the same drain can be placed on a GPU claimed after it). Among those that qualify, the fewest victims first (the
// least work lost), then the newest (whose oldest holder started last),
// then the UUID. It returns the runs to preempt and the GPUs to claim, or
// nothing when even all of them would not cover the deficit.
func ChooseShared(s Snapshot, r Request, deficit int, taken map[string]bool) ([]string, []string) {
	byID := map[string]Running{}
	var own []string
	for _, v := range s.Running {
		byID[v.ID] = v
		if v.Preemptible && !v.Yielding && !taken[v.ID] && v.Pool == r.Pool && v.Priority < r.Priority && v.Units > 0 {
			own = append(own, v.ID)
			deficit -= v.Units
		}
	}
	booked := map[Pool]bool{}
	for _, b := range s.Reservations {
		if b.Active(s.Now) {
			booked[b.Pool] = true
		}
	}
	type cand struct {
		gpu    SharedGPU
		oldest time.Time
	}
	var cands []cand
	for _, g := range s.Shared {
		if g.Pool != r.Pool || g.ClaimedBy != "" || len(g.Holders) == 0 || len(g.Holders) < g.Slices || booked[g.SlicePool] {
			continue
		}
		ok := true
		var oldest time.Time
		for _, h := range g.Holders {
			v, found := byID[h]
			if !found || !v.Preemptible || v.Yielding || taken[h] || v.Priority >= r.Priority {
				ok = false
				break
			}
			if oldest.IsZero() || v.Started.Before(oldest) {
				oldest = v.Started
			}
		}
		if ok {
			cands = append(cands, cand{gpu: g, oldest: oldest})
		}
	}
	if deficit <= 0 || len(cands) < deficit {
		return nil, nil
	}
	sort.SliceStable(cands, func(i, j int) bool {
		a, b := cands[i], cands[j]
		if len(a.gpu.Holders) != len(b.gpu.Holders) {
			return len(a.gpu.Holders) < len(b.gpu.Holders)
		}
		if !a.oldest.Equal(b.oldest) {
			return a.oldest.After(b.oldest)
		}
		return a.gpu.UUID < b.gpu.UUID
	})
	victims := own
	var claim []string
	for _, c := range cands[:deficit] {
		claim = append(claim, c.gpu.UUID)
		victims = append(victims, c.gpu.Holders...)
	}
	return victims, claim
}

// Span is a stretch of time during which a user held units.
type Span struct {
	User  int64
	Units int
	Start time.Time
	End   time.Time // zero: still held
}

// DecayedUsage is each user's unit-seconds, each second weighted by
// 2^(-age/halfLife): usage an hour ago counts half when the half-life is
// an hour. It orders requests of equal priority (fair share).
func DecayedUsage(spans []Span, now time.Time, halfLife time.Duration) map[int64]float64 {
	out := map[int64]float64{}
	if halfLife <= 0 {
		return out
	}
	h := halfLife.Seconds()
	k := math.Ln2 / h
	for _, sp := range spans {
		end := sp.End
		if end.IsZero() || end.After(now) {
			end = now
		}
		if !end.After(sp.Start) || sp.Units <= 0 {
			continue
		}
		a := now.Sub(end).Seconds()                // age of the end
		b := now.Sub(sp.Start).Seconds()           // age of the start
		w := (math.Exp(-k*a) - math.Exp(-k*b)) / k // ∫ e^{-k·age} d(age) over [a, b]
		out[sp.User] += float64(sp.Units) * w
	}
	return out
}

// inService is how many units of pool are in service: free, or held by
// what runs or by an orphan container (the sweep gives them back).
func inService(s Snapshot, pool Pool) int {
	n := s.Free[pool]
	for _, r := range s.Running {
		if r.Pool == pool {
			n += r.Units
		}
	}
	for _, o := range s.Orphans {
		if o.Pool == pool {
			n += o.Units
		}
	}
	return n
}
