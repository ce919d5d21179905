package orchestrator

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"net/url"
	"sort"
	"strings"
	"time"

	"workbench/models"
	"workbench/orchestrator/scheduler"
)

// GPUWatcher fires users' "notify me when a GPU frees" watches: when a GPU
// of a watched model is free, each pending watch on it gets one in-app
// notification (models.FireGPUWatch makes it exactly once). A watch on a
// flavor fires only when the flavor can start: enough units of its kind
// (whole GPUs of its model, MIG instances of its profile, slices of shared
// GPUs) are free for it, beyond what queued launches wait for.
type GPUWatcher struct {
	store  *models.Store
	pool   *Pool
	events *Broker
	log    *slog.Logger
	every  time.Duration
	// senders deliver a fired watch by email and webhook too, when the
	// operator configured them; publicURL makes the link absolute.
	senders   []Sender
	publicURL string
	// now is the clock bookings are judged by (SetClock in tests).
	now func() time.Time
}

// SetClock replaces the watcher's clock (tests move it with the manager's).
func (w *GPUWatcher) SetClock(now func() time.Time) { w.now = now }

// SendVia adds email/webhook delivery of fired watches (SendVia before
// Run). Each fired watch is sent once per channel, best effort: a failure
// is logged, the in-app notification stays.
func (w *GPUWatcher) SendVia(publicURL string, senders ...Sender) {
	w.publicURL = strings.TrimSuffix(publicURL, "/")
	w.senders = append(w.senders, senders...)
}

// NewGPUWatcher builds the watcher; it checks every `every` (default 15 s)
// and at once whenever a workbench stops, fails or is deleted.
func NewGPUWatcher(store *models.Store, pool *Pool, events *Broker, every time.Duration, log *slog.Logger) *GPUWatcher {
	if every <= 0 {
		every = 15 * time.Second
	}
	return &GPUWatcher{store: store, pool: pool, events: events, every: every, log: log.With("component", "gpu-watch"), now: time.Now}
}

// Check fires the pending watches whose model has a free GPU now, or whose
// flavor can start now, and returns how many it fired.
func (w *GPUWatcher) Check(ctx context.Context) (int, error) {
	pending, err := w.store.PendingGPUWatches(ctx)
	if err != nil || len(pending) == 0 {
		return 0, err
	}
	// Units the queue is about to hand to waiting launches are not free
	// for a watcher: telling them to launch would only put them in the
	// queue. Only the launches that go before the watcher's count: a
	// launch of a higher class goes ahead of lower ones (a preemptible
	// run waiting to resume kept every interactive user's watch silent
	// while their launch would have started at once).
	queued, err := queuedDemand(ctx, w.store)
	if err != nil {
		return 0, err
	}
	var free map[string]int // whole GPUs free per model, read when needed
	flavorFree := map[int64]*flavorRoom{}
	fired := 0
	for _, wt := range pending {
		var msg, link string
		var flavorID int64
		if wt.FlavorID != nil {
			flavorID = *wt.FlavorID
		}
		rank, err := w.launchRank(ctx, wt.UserID, flavorID)
		if err != nil {
			return fired, err
		}
		if wt.FlavorID != nil {
			room, ok := flavorFree[*wt.FlavorID]
			if !ok {
				if room, err = w.flavorRoom(ctx, *wt.FlavorID); err != nil {
					return fired, err
				}
				flavorFree[*wt.FlavorID] = room
			}
			if room == nil {
				continue
			}
			left := queued.freeFor(unitPool(room.need.Kind, room.need.Model, room.need.Profile), rank, room.free)
			if left < room.fl.GPUCount {
				continue
			}
			// Units booked for someone else now are not the watcher's
			// (their launch is refused "reserved for someone else now").
			n, err := w.lessReservedForOthers(ctx, left, room.need, wt.UserID)
			if err != nil {
				return fired, err
			}
			if n < room.fl.GPUCount {
				continue
			}
			msg = reasonf("Flavor %s can start now: %d × %s free, it needs %d. Launch a workbench before someone else takes them.",
				room.fl.Name, n, unitPool(room.need.Kind, room.need.Model, room.need.Profile).Label(), room.fl.GPUCount)
			link = "/workbenches/new?flavor=" + url.QueryEscape(room.fl.Name)
		} else {
			if free == nil {
				if free, err = w.freeGPUs(ctx); err != nil {
					return fired, err
				}
			}
			n := queued.freeFor(scheduler.PoolGPU(wt.GPUModel), rank, free[wt.GPUModel])
			if n <= 0 {
				continue
			}
			if n, err = w.lessReservedForOthers(ctx, n, models.GPUNeed{Kind: models.UnitGPU, Model: wt.GPUModel, Count: 1}, wt.UserID); err != nil {
				return fired, err
			}
			if n <= 0 {
				continue
			}
			msg = reasonf("A GPU of model %s is free now (%d free). Launch a workbench before someone else takes it.", wt.GPUModel, n)
			link = "/workbenches/new"
		}
		ok, err := w.store.FireGPUWatch(ctx, wt.ID, msg, link)
		if err != nil {
			return fired, err
		}
		if ok {
			fired++
			w.send(ctx, wt, msg, link)
		}
	}
	return fired, nil
}

// lessReservedForOthers is free less the units of need's kind that active
// bookings of users other than userID hold back now.
func (w *GPUWatcher) lessReservedForOthers(ctx context.Context, free int, need models.GPUNeed, userID int64) (int, error) {
	_, held, err := w.store.ReservedForOthersNow(ctx, need, userID, w.now())
	if err != nil {
		return 0, err
	}
	return free - held, nil
}

// freeGPUs counts the whole GPUs free per model.
func (w *GPUWatcher) freeGPUs(ctx context.Context) (map[string]int, error) {
	gpus, err := w.pool.List(ctx)
	if err != nil {
		return nil, err
	}
	free := map[string]int{}
	for _, g := range gpus {
		if g.State == GPUFree {
			free[g.Model]++
		}
	}
	return free, nil
}

// flavorRoom is what a flavor watch compares: the units of the flavor's
// kind a launch could be given now (Check takes off those queued launches
// ahead of the watcher wait for).
type flavorRoom struct {
	fl   *models.Flavor
	need models.GPUNeed
	free int
}

// flavorRoom reads the room for flavor id; nil when the flavor cannot be
// launched (disabled, or without GPUs), so its watches wait.
func (w *GPUWatcher) flavorRoom(ctx context.Context, id int64) (*flavorRoom, error) {
	fl, err := w.store.FlavorByID(ctx, id)
	if errors.Is(err, models.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if !fl.Enabled || fl.GPUCount == 0 {
		return nil, nil
	}
	need, err := w.pool.Need(ctx, fl)
	if err != nil {
		return nil, err
	}
	n, err := w.store.LaunchableUnits(ctx, need)
	if err != nil {
		return nil, err
	}
	return &flavorRoom{fl: fl, need: need, free: n}, nil
}

// send delivers a watch that just fired through the configured channels.
// It runs once per firing (FireGPUWatch reports a firing once), so each
// subscription is sent at most once per channel.
func (w *GPUWatcher) send(ctx context.Context, wt models.GPUWatch, msg, link string) {
	if len(w.senders) == 0 {
		return
	}
	u, err := w.store.UserByID(ctx, wt.UserID)
	if err != nil {
		w.log.Warn("GPU watch: load user", "watch", wt.ID, "err", err)
		return
	}
	n := Notice{Event: "gpu_free", WatchID: wt.ID, User: u.Username, Email: u.Email, GPUModel: wt.GPUModel,
		Message: msg, Link: w.publicURL + link, At: time.Now().UTC(), Locale: u.Locale, TimeZone: u.TimeZone}
	if wt.FlavorID != nil {
		if fl, err := w.store.FlavorByID(ctx, *wt.FlavorID); err == nil {
			n.Flavor = fl.Name
		}
	}
	deliver(ctx, w.log, w.senders, n)
}

// Run checks until ctx ends.
func (w *GPUWatcher) Run(ctx context.Context) {
	updates, unsubscribe := w.events.Subscribe("")
	defer unsubscribe()
	t := time.NewTicker(w.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case u := <-updates:
			if u.State != models.StateStopped && u.State != models.StateFailed && u.State != "deleted" {
				continue
			}
		case <-t.C:
		}
		if _, err := w.Check(ctx); err != nil && ctx.Err() == nil {
			w.log.Warn("GPU watch check", "err", err)
		}
	}
}

// watchQueuedAsk is one queued launch's need: units of one pool, at the rank
// of its priority class.
type watchQueuedAsk struct {
	rank, units int
}

// queuedUnits is what queued launches wait for, per pool of units (whole
// GPUs of a model, MIG instances of a profile, slices), highest rank
// first, in queue order within a rank.
type queuedUnits map[scheduler.Pool][]watchQueuedAsk

// freeFor is what is left of free units of pool for a launch of rank once
// the queue has had its due: launches of its class (they came first) and
// above are owed their units; a lower-ranked one only takes what it can
// start on now (placed by the next drain, before the watcher's user could
// launch). One that cannot start now holds nothing back from a higher
// class, which goes ahead of it (a preempted 4-GPU run waiting to resume
// kept every watch of the model silent while a GPU was free and an
// interactive launch took it at once).
func (q queuedUnits) freeFor(pool scheduler.Pool, rank, free int) int {
	left := free
	for _, a := range q[pool] {
		if a.rank >= rank {
			left -= a.units
		}
	}
	for _, a := range q[pool] {
		if a.rank < rank && a.units <= left {
			left -= a.units
		}
	}
	return left
}

// launchRank is the rank of the class a launch of flavorID (0: a model
// watch, no flavor) by userID takes when it names none, as the launch
// form's default.
func (w *GPUWatcher) launchRank(ctx context.Context, userID, flavorID int64) (int, error) {
	pc, err := w.store.LaunchDefaultClass(ctx, userID, flavorID)
	if err != nil {
		return 0, err
	}
	return pc.Rank, nil
}

// QueuedDemand is what queued launches wait for, by pool and rank: what
// the queued page's "free now under another flavor" leaves to the queue,
// by the rule the GPU watches follow (queuedUnits.freeFor).
type QueuedDemand struct{ units queuedUnits }

// LoadQueuedDemand reads the queued launches' demand now.
func LoadQueuedDemand(ctx context.Context, store *models.Store) (QueuedDemand, error) {
	q, err := queuedDemand(ctx, store)
	return QueuedDemand{units: q}, err
}

// FreeFor is what is left of free units of pool p for a new launch of rank
// once the queue has had its due (queuedUnits.freeFor): launches of its
// class and above are owed their units; a lower class's only what it can
// start on now.
func (d QueuedDemand) FreeFor(p models.UnitPool, rank, free int) int {
	kind := p.Kind
	if kind == "" {
		kind = models.UnitGPU
	}
	return d.units.freeFor(unitPool(kind, p.Model, p.Profile), rank, free)
}

// queuedDemand counts the units queued workbenches wait for, per pool of
// units and rank. A class no longer defined counts as ahead of everyone.
func queuedDemand(ctx context.Context, store *models.Store) (queuedUnits, error) {
	queued, err := store.ListWorkbenches(ctx, 0, models.StateQueued)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(queued, func(i, j int) bool {
		if queued[i].QueuePosition != queued[j].QueuePosition {
			return queued[i].QueuePosition < queued[j].QueuePosition
		}
		return queued[i].CreatedAt.Before(queued[j].CreatedAt)
	})
	classes, err := store.PriorityClasses(ctx)
	if err != nil {
		return nil, err
	}
	ranks := map[string]int{}
	for _, pc := range classes {
		ranks[pc.Name] = pc.Rank
		if pc.IsDefault {
			if _, ok := ranks[""]; !ok {
				ranks[""] = pc.Rank // a record from before classes
			}
		}
	}
	out := queuedUnits{}
	for _, wb := range queued {
		if WaitsOnOwnerAlone(wb.QueueReason) {
			// Held by its owner's quota or waiting for its owner's own
			// booking: it takes no free unit now and holds back nobody
			// (counted, it kept watches silent while GPUs were free).
			continue
		}
		fl, err := store.FlavorByID(ctx, wb.FlavorID)
		if errors.Is(err, models.ErrNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		if fl.GPUCount > 0 {
			kind := fl.UnitKind
			if kind == "" {
				kind = models.UnitGPU
			}
			rank, ok := ranks[wb.Priority]
			if !ok {
				rank = math.MaxInt
			}
			pool := unitPool(kind, fl.GPUModel, fl.MIGProfile)
			out[pool] = append(out[pool], watchQueuedAsk{rank: rank, units: fl.GPUCount})
		}
	}
	for _, asks := range out {
		sort.SliceStable(asks, func(i, j int) bool { return asks[i].rank > asks[j].rank })
	}
	return out, nil
}
