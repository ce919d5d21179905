package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"workbench/models"
	"workbench/models/pricing"
)

// Billing turns usage intervals into ledger lines (SPEC §6) and prices
// running workbenches up to now for live cost and budgets.
//
// A line is written only for a span that can no longer change: a whole
// clock hour that has passed, or the rest of an interval once it is closed
// (then the minimum charge applies). The part of a running interval since
// the last hour boundary is priced on the fly and never stored, so the
// ledger stays append-only without corrections.
type Billing struct {
	store     *models.Store
	minCharge time.Duration
	now       func() time.Time
	// metered, when set, is given the lines each pass appended (Added),
	// for the charges and GPU-seconds counters.
	metered func(ctx context.Context, lines []models.LedgerEntry)
	// stoppedAt, when set, is when a workbench whose run is still open in
	// the database stopped: a stop carried out that the database could
	// not record yet (Manager.UnrecordedStop). What is shown and counted
	// as owed ends there, as the run will when it is recorded.
	stoppedAt func(workbenchID string) (time.Time, bool)
}

// openEnd is where the unbilled part of iv, open in the database, ends at
// now: now, or the stop not recorded yet that ended it.
func (b *Billing) openEnd(iv models.UsageInterval, now time.Time) time.Time {
	if b.stoppedAt != nil {
		if at, ok := b.stoppedAt(iv.WorkbenchID); ok && !at.Before(iv.StartedAt) && at.Before(now) {
			return at
		}
	}
	return now
}

// NewBilling returns the biller; minCharge is the minimum charge per run.
func NewBilling(store *models.Store, minCharge time.Duration) *Billing {
	return &Billing{store: store, minCharge: minCharge, now: func() time.Time { return time.Now().UTC() }}
}

func shapeOf(iv models.UsageInterval) pricing.Shape {
	return pricing.Shape{GPUModel: iv.GPUModel, GPUCount: iv.GPUCount, UnitKind: iv.UnitKind, UnitProfile: iv.UnitProfile,
		CPUMilli: iv.CPUMilli, MemoryMiB: iv.MemoryMiB, Tier: iv.Tier}
}

// minChargeOf is the minimum charge of iv: none for the part of a run that
// a restart behind the portal's back ended (the run goes on).
func (b *Billing) minChargeOf(iv models.UsageInterval) time.Duration {
	if iv.EndReason == models.EndRestartedOutside {
		return 0
	}
	return b.minCharge
}

// billable returns the span of iv that may be written to the ledger at now,
// and whether that settles the interval.
func (b *Billing) billable(iv models.UsageInterval, now time.Time) (from, to time.Time, settled bool) {
	from = iv.StartedAt
	if iv.BilledThrough != nil && iv.BilledThrough.After(from) {
		from = *iv.BilledThrough
	}
	if iv.EndedAt != nil {
		_, end := pricing.BilledSpan(iv.StartedAt, *iv.EndedAt, b.minChargeOf(iv))
		return from, end, true
	}
	// Only hours the workbench is known to have lived through: its last
	// heartbeat came after them. Were it to vanish during a portal crash,
	// its interval closes at that heartbeat, and nothing billed lies beyond.
	to = now.Truncate(time.Hour)
	if hb := iv.HeartbeatAt.Truncate(time.Hour); hb.Before(to) {
		to = hb
	}
	if to.Before(from) {
		to = from
	}
	return from, to, false
}

// BillOnce writes every line that can be written now. Running it twice adds
// nothing (idempotency keys). It returns the number of new lines.
func (b *Billing) BillOnce(ctx context.Context) (int, error) {
	ivs, err := b.store.IntervalsToBill(ctx)
	if err != nil {
		return 0, err
	}
	storage, err := b.store.StorageToBill(ctx)
	if err != nil {
		return 0, err
	}
	if len(ivs) == 0 && len(storage) == 0 {
		return 0, nil
	}
	scheds, err := b.store.Schedules(ctx)
	if err != nil {
		return 0, err
	}
	now := b.now()
	// One interval that cannot be priced (or recorded) must not hold up
	// the others: each error is kept, the pass goes on, and the caller
	// counts and logs what comes back.
	total, err := b.billStorage(ctx, storage, scheds, now)
	errs := []error{err}
	for _, iv := range ivs {
		from, to, settled := b.billable(iv, now)
		if !to.After(from) && !settled {
			continue
		}
		lines, err := pricing.PriceRun(shapeOf(iv), iv.StartedAt, from, to, scheds)
		if err != nil {
			errs = append(errs, &UnpricedError{IntervalID: iv.ID, WorkbenchID: iv.WorkbenchID, Open: iv.EndedAt == nil, Err: err})
			continue
		}
		groups, err := b.store.GroupTimeline(ctx, iv.UserID)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		// The CPU and memory lines of a run on GPU units carry its units'
		// model too: billing "by GPU model" then puts a GPU workbench's
		// whole cost under its model, and the lines without one are those
		// of CPU-only runs, home storage and credits.
		unitModel := ""
		if iv.GPUCount > 0 {
			_, unitModel = pricing.UnitRate(shapeOf(iv))
		}
		entries := make([]models.LedgerEntry, 0, len(lines))
		for _, l := range lines {
			id := iv.ID
			model := l.GPUModel
			if model == "" {
				model = unitModel
			}
			entries = append(entries, models.LedgerEntry{
				IdempotencyKey: fmt.Sprintf("iv:%d:%s:%d", iv.ID, l.Resource, l.Start.Unix()),
				UserID:         iv.UserID, WorkbenchID: iv.WorkbenchID, IntervalID: &id,
				Resource: l.Resource, GPUModel: model, PeriodStart: l.Start, PeriodEnd: l.End,
				Seconds: l.Seconds, QuantityMilli: l.Quantity, RateMicros: l.RateMicros, AmountMicros: l.Amount,
			})
		}
		// Each line goes to the group its owner was in during it, split
		// where they moved (or their group was deleted) inside it.
		entries = groups.Attribute(entries)
		n, err := b.store.RecordBilling(ctx, iv.ID, entries, to, settled)
		if err != nil {
			errs = append(errs, fmt.Errorf("record interval %d: %w", iv.ID, err))
			continue
		}
		b.report(ctx, entries)
		total += n
	}
	return total, errors.Join(errs...)
}

// report hands the appended lines to the metered hook.
func (b *Billing) report(ctx context.Context, entries []models.LedgerEntry) {
	if b.metered != nil {
		b.metered(ctx, entries)
	}
}

// UnpricedError is an interval the price list cannot price (no rate in
// force for a resource it holds).
type UnpricedError struct {
	IntervalID  int64
	WorkbenchID string
	Open        bool // the workbench is still running
	Err         error
}

func (e *UnpricedError) Error() string {
	return fmt.Sprintf("price interval %d of workbench %s: %v", e.IntervalID, e.WorkbenchID, e.Err)
}

func (e *UnpricedError) Unwrap() error { return e.Err }

// AccruingForGroup is what is not in the ledger yet (Accruing: running
// compute and home storage since its last bill, this month) of the usage
// of userIDs that goes to group groupID: each priced line split by the
// group its owner was in during it, as the billing pass will write it
// (GroupTimeline.Attribute). userIDs are those who were members this month
// (GroupMembersSince): one who left keeps the part from before.
func (b *Billing) AccruingForGroup(ctx context.Context, groupID int64, userIDs []int64) (int64, error) {
	if len(userIDs) == 0 {
		return 0, nil
	}
	month := models.MonthStart(b.now())
	scheds, err := b.store.Schedules(ctx)
	if err != nil {
		return 0, err
	}
	timelines, err := b.store.GroupTimelines(ctx, userIDs)
	if err != nil {
		return 0, err
	}
	var sum int64
	for _, uid := range userIDs {
		lines, err := b.unbilledLines(ctx, scheds, uid, month)
		if err != nil {
			return 0, err
		}
		for _, l := range lines {
			for _, p := range timelines[uid].Split(l.Start, l.End, l.Seconds, l.Amount) {
				if p.Group.ID == groupID {
					sum += p.Amount
				}
			}
		}
	}
	return sum, nil
}

// unbilledLines is what Accruing prices for userID, line by line: the
// unbilled compute of their runs and their home storage, from since on.
func (b *Billing) unbilledLines(ctx context.Context, scheds map[string]pricing.Schedule, userID int64, since time.Time) ([]pricing.Line, error) {
	ivs, err := b.store.IntervalsToBillOf(ctx, userID, nil)
	if err != nil {
		return nil, err
	}
	var out []pricing.Line
	err = b.eachUnbilled(ivs, scheds, since, func(_ models.UsageInterval, lines []pricing.ResourceLine) {
		for _, l := range lines {
			out = append(out, l.Line)
		}
	})
	if err != nil {
		return nil, err
	}
	err = b.eachUnbilledStorage(ctx, userID, scheds, since, func(_ models.StorageInterval, lines []pricing.Line) {
		out = append(out, lines...)
	})
	return out, err
}

// unbilled prices the unbilled usage from since on (zero: all of it).
func (b *Billing) unbilled(ctx context.Context, scheds map[string]pricing.Schedule, userID int64, wbID string, since time.Time) (models.MonthUsage, error) {
	var out models.MonthUsage
	var wbIDs []string
	if wbID != "" {
		wbIDs = []string{wbID}
	}
	per, err := b.unbilledByWorkbench(ctx, scheds, since, userID, wbIDs)
	for _, u := range per {
		out.GPUSeconds += u.GPUSeconds
		out.AmountMicros += u.AmountMicros
	}
	return out, err
}

// unbilledByWorkbench prices the unbilled part of the intervals that keep
// selects, from since on (zero: all), per workbench, reading the intervals
// once. A month's budget passes since = the month's start, so last month's
// part of a run still going is never counted against the new month (the
// second that straddles midnight stays with the old month, as in the
// ledger).
//
// userID (0: anyone's) and wbIDs (nil: any workbench) select the intervals
// in SQL, so a page about one user's workbenches reads only theirs.
func (b *Billing) unbilledByWorkbench(ctx context.Context, scheds map[string]pricing.Schedule, since time.Time, userID int64, wbIDs []string) (map[string]models.MonthUsage, error) {
	ivs, err := b.store.IntervalsToBillOf(ctx, userID, wbIDs)
	if err != nil {
		return map[string]models.MonthUsage{}, err
	}
	return b.priceUnbilled(ivs, scheds, since)
}

// priceUnbilled is unbilledByWorkbench over intervals already read.
func (b *Billing) priceUnbilled(ivs []models.UsageInterval, scheds map[string]pricing.Schedule, since time.Time) (map[string]models.MonthUsage, error) {
	out := map[string]models.MonthUsage{}
	err := b.eachUnbilled(ivs, scheds, since, func(iv models.UsageInterval, lines []pricing.ResourceLine) {
		u := out[iv.WorkbenchID]
		for _, l := range lines {
			u.AmountMicros += l.Amount
			if l.Resource == pricing.GPU {
				u.GPUSeconds += l.Seconds * l.Quantity / pricing.MilliUnits
			}
		}
		out[iv.WorkbenchID] = u
	})
	return out, err
}

// eachUnbilled prices the unbilled part of each of ivs from since on and
// hands its lines to fn (none for an interval with nothing unbilled).
func (b *Billing) eachUnbilled(ivs []models.UsageInterval, scheds map[string]pricing.Schedule, since time.Time, fn func(models.UsageInterval, []pricing.ResourceLine)) error {
	now := b.now()
	for _, iv := range ivs {
		from := iv.StartedAt
		if iv.BilledThrough != nil && iv.BilledThrough.After(from) {
			from = *iv.BilledThrough
		}
		if since.After(from) {
			from = since
		}
		// A running second counts once it has begun, as it will be billed,
		// and a run younger than the minimum charge already owes it: the
		// cost shown in its first minute read 0.01 while 0.058 was billed
		// at its stop (the launch's budget check counts the minimum too).
		end := b.openEnd(iv, now)
		if iv.EndedAt != nil {
			end = *iv.EndedAt
		}
		_, to := pricing.BilledSpan(iv.StartedAt, end, b.minChargeOf(iv))
		if !to.After(from) {
			continue
		}
		lines, err := pricing.PriceRun(shapeOf(iv), iv.StartedAt, from, to, scheds)
		if err != nil {
			return err
		}
		fn(iv, lines)
	}
	return nil
}

// MonthUsage is a user's use of the current month: ledger plus unbilled
// compute and storage.
//
// The ledger and the unbilled part are read in one snapshot: a billing
// pass moves a stopped run from one to the other, and read apart a pass
// between the two reads dropped the run — the queue then placed a launch
// just after its owner's budget had stopped the run before it.
func (b *Billing) MonthUsage(ctx context.Context, userID int64) (models.MonthUsage, error) {
	var out models.MonthUsage
	err := b.store.Snapshot(ctx, func(snap *models.Store) error {
		in := *b
		in.store = snap
		month := models.MonthStart(in.now())
		ledger, err := snap.MonthTotals(ctx, userID, month)
		if err != nil {
			return err
		}
		live, err := in.Accruing(ctx, userID)
		if err != nil {
			return err
		}
		out = models.MonthUsage{GPUSeconds: ledger.GPUSeconds + live.GPUSeconds, AmountMicros: ledger.AmountMicros + live.AmountMicros,
			CreditMicros: ledger.CreditMicros, AccruingMicros: live.AmountMicros}
		return nil
	})
	return out, err
}

// Accruing is what userID (0: everyone) has used this month that is not in
// the ledger yet — running compute and home storage — priced as the next
// billing pass will: MonthUsage less the ledger. Pages that show a month's
// spend beside its statement add it, so they agree with the budget, which
// counts it.
func (b *Billing) Accruing(ctx context.Context, userID int64) (models.MonthUsage, error) {
	month := models.MonthStart(b.now())
	scheds, err := b.store.Schedules(ctx)
	if err != nil {
		return models.MonthUsage{}, err
	}
	live, err := b.unbilled(ctx, scheds, userID, "", month)
	if err != nil {
		return models.MonthUsage{}, err
	}
	storage, err := b.unbilledStorage(ctx, userID, scheds, month)
	if err != nil {
		return models.MonthUsage{}, err
	}
	for _, m := range storage {
		live.AmountMicros += m
	}
	return live, nil
}

// AccruingByUser is Accruing for every user at once (two reads, whatever
// the number of users): for pages that list users.
func (b *Billing) AccruingByUser(ctx context.Context) (map[int64]models.MonthUsage, error) {
	month := models.MonthStart(b.now())
	scheds, err := b.store.Schedules(ctx)
	if err != nil {
		return nil, err
	}
	ivs, err := b.store.IntervalsToBillOf(ctx, 0, nil)
	if err != nil {
		return nil, err
	}
	perWB, err := b.priceUnbilled(ivs, scheds, month)
	if err != nil {
		return nil, err
	}
	owner := make(map[string]int64, len(ivs))
	for _, iv := range ivs {
		owner[iv.WorkbenchID] = iv.UserID
	}
	out := map[int64]models.MonthUsage{}
	for wb, u := range perWB {
		m := out[owner[wb]]
		m.GPUSeconds += u.GPUSeconds
		m.AmountMicros += u.AmountMicros
		out[owner[wb]] = m
	}
	storage, err := b.unbilledStorage(ctx, 0, scheds, month)
	if err != nil {
		return nil, err
	}
	for user, micros := range storage {
		m := out[user]
		m.AmountMicros += micros
		out[user] = m
	}
	return out, nil
}

// HourlyRate is what a shape costs per hour at the rates in force now.
func (b *Billing) HourlyRate(ctx context.Context, shape pricing.Shape) (int64, error) {
	scheds, err := b.store.Schedules(ctx)
	if err != nil {
		return 0, err
	}
	return b.hourlyRate(shape, scheds)
}

// MinimumCharge is what a run of shape started now costs at least: the
// minimum charge (zero when there is none) priced from now. Seconds is the
// minimum in seconds.
func (b *Billing) MinimumCharge(ctx context.Context, shape pricing.Shape) (micros, seconds int64, err error) {
	if b.minCharge < time.Second {
		return 0, 0, nil
	}
	scheds, err := b.store.Schedules(ctx)
	if err != nil {
		return 0, 0, err
	}
	now := b.now().Truncate(time.Second)
	_, end := pricing.BilledSpan(now, now, b.minCharge)
	lines, err := pricing.PriceShape(shape, now, end, scheds)
	if err != nil {
		return 0, 0, err
	}
	return pricing.SumResources(lines), int64(b.minCharge / time.Second), nil
}

func (b *Billing) hourlyRate(shape pricing.Shape, scheds map[string]pricing.Schedule) (int64, error) {
	// Only the rates in force now, as if they had always been: pricing this
	// clock hour with the full history would blend in a rate that changed
	// earlier in the hour, or one that starts later in it.
	now := b.now()
	current := make(map[string]pricing.Schedule, len(scheds))
	for k, s := range scheds {
		if r, ok := s.At(now); ok {
			current[k] = pricing.Schedule{{Micros: r.Micros}}
		}
	}
	start := now.Truncate(time.Hour)
	lines, err := pricing.PriceShape(shape, start, start.Add(time.Hour), current)
	if err != nil {
		return 0, err
	}
	return pricing.SumResources(lines), nil
}

// WorkbenchCost is what workbenches have cost so far (ledger plus the
// running part) and, for those running, what they cost per hour now.
type WorkbenchCost struct {
	SoFarMicros   int64
	PerHourMicros int64
}

// Costs returns the cost of each workbench in wbs.
func (b *Billing) Costs(ctx context.Context, wbs []models.Workbench, flavors map[int64]*models.Flavor) (map[string]WorkbenchCost, error) {
	ids := make([]string, len(wbs))
	for i, w := range wbs {
		ids[i] = w.ID
	}
	charged, err := b.store.WorkbenchCharges(ctx, ids)
	if err != nil {
		return nil, err
	}
	scheds, err := b.store.Schedules(ctx)
	if err != nil {
		return nil, err
	}
	ivs, err := b.store.IntervalsToBillOf(ctx, 0, ids)
	if err != nil {
		return nil, err
	}
	live, err := b.priceUnbilled(ivs, scheds, time.Time{})
	if err != nil {
		return nil, err
	}
	// A running workbench is charged for the shape its open interval took
	// when the run started; an administrator's later edit of the flavor
	// (more GPUs, more memory) changes the next run, not this one, so the
	// rate shown is the interval's.
	running := map[string]pricing.Shape{}
	for _, iv := range ivs {
		if iv.EndedAt == nil {
			running[iv.WorkbenchID] = shapeOf(iv)
		}
	}
	out := make(map[string]WorkbenchCost, len(wbs))
	for _, w := range wbs {
		c := WorkbenchCost{SoFarMicros: charged[w.ID] + live[w.ID].AmountMicros}
		if w.State == models.StateRunning && !b.stopped(w.ID) {
			shape, ok := running[w.ID]
			if fl := flavors[w.ShapeFlavorID()]; !ok && fl != nil {
				shape, ok = WorkbenchShape(fl, w.Preemptible), true // not metered yet
			}
			if ok {
				if c.PerHourMicros, err = b.hourlyRate(shape, scheds); err != nil {
					return nil, err
				}
			}
		}
		out[w.ID] = c
	}
	return out, nil
}

// stopped reports whether id stopped without its stop recorded yet: it
// costs nothing per hour any more.
func (b *Billing) stopped(id string) bool {
	if b.stoppedAt == nil {
		return false
	}
	_, ok := b.stoppedAt(id)
	return ok
}

// FlavorShape is the priced shape of a flavor.
func FlavorShape(f *models.Flavor) pricing.Shape {
	s := pricing.Shape{CPUMilli: int64(f.CPUMilli), MemoryMiB: f.MemoryMiB}
	if f.GPUCount > 0 {
		s.GPUModel, s.GPUCount = f.GPUModel, f.GPUCount
		s.UnitKind, s.UnitProfile = f.UnitKind, f.MIGProfile
	}
	return s
}

// WorkbenchShape is the priced shape of a workbench of flavor f: a
// preemptible one's GPUs at the preemptible tier.
func WorkbenchShape(f *models.Flavor, preemptible bool) pricing.Shape {
	s := FlavorShape(f)
	if preemptible && s.GPUCount > 0 {
		s.Tier = pricing.TierPreemptible
	}
	return s
}

// storageSpan is the part of a storage interval that can be billed at now:
// whole past hours, or everything once it is closed (no minimum charge for
// storage: it is pro rata per second).
func storageSpan(iv models.StorageInterval, now time.Time) (from, to time.Time, settled bool) {
	from = iv.StartedAt
	if iv.BilledThrough != nil && iv.BilledThrough.After(from) {
		from = *iv.BilledThrough
	}
	if iv.EndedAt != nil {
		_, to = pricing.BilledSpan(iv.StartedAt, *iv.EndedAt, 0)
		return from, to, true
	}
	to = now.Truncate(time.Hour)
	if to.Before(from) {
		to = from
	}
	return from, to, false
}

func (b *Billing) billStorage(ctx context.Context, ivs []models.StorageInterval, scheds map[string]pricing.Schedule, now time.Time) (int, error) {
	total := 0
	var errs []error
	for _, iv := range ivs {
		from, to, settled := storageSpan(iv, now)
		if !to.After(from) && !settled {
			continue
		}
		var lines []pricing.Line
		if to.After(from) {
			var err error
			lines, err = pricing.SplitRun(iv.StartedAt, from, to, iv.SizeMilliGiB, scheds[pricing.ScheduleKey(pricing.Storage, "")], true)
			if err != nil {
				errs = append(errs, fmt.Errorf("price storage interval %d: %w", iv.ID, err))
				continue
			}
		}
		groups, err := b.store.GroupTimeline(ctx, iv.UserID)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		entries := make([]models.LedgerEntry, 0, len(lines))
		for _, l := range lines {
			entries = append(entries, models.LedgerEntry{
				IdempotencyKey: fmt.Sprintf("st:%d:%d", iv.ID, l.Start.Unix()),
				UserID:         iv.UserID, Resource: pricing.Storage,
				PeriodStart: l.Start, PeriodEnd: l.End, Seconds: l.Seconds, QuantityMilli: l.Quantity,
				RateMicros: l.RateMicros, AmountMicros: l.Amount, Note: iv.Volume,
			})
		}
		entries = groups.Attribute(entries)
		n, err := b.store.RecordStorageBilling(ctx, iv.ID, entries, to, settled)
		if err != nil {
			errs = append(errs, fmt.Errorf("record storage interval %d: %w", iv.ID, err))
			continue
		}
		b.report(ctx, entries)
		total += n
	}
	return total, errors.Join(errs...)
}

// unbilledStorage prices the storage not in the ledger yet for userID
// (0: everyone), from since on, per user.
func (b *Billing) unbilledStorage(ctx context.Context, userID int64, scheds map[string]pricing.Schedule, since time.Time) (map[int64]int64, error) {
	total := map[int64]int64{}
	err := b.eachUnbilledStorage(ctx, userID, scheds, since, func(iv models.StorageInterval, lines []pricing.Line) {
		total[iv.UserID] += pricing.Sum(lines)
	})
	if err != nil {
		return nil, err
	}
	return total, nil
}

// eachUnbilledStorage prices the unbilled storage of userID (0: everyone)
// from since on, interval by interval, and hands the lines to fn.
func (b *Billing) eachUnbilledStorage(ctx context.Context, userID int64, scheds map[string]pricing.Schedule, since time.Time, fn func(models.StorageInterval, []pricing.Line)) error {
	var ivs []models.StorageInterval
	var err error
	if userID != 0 {
		ivs, err = b.store.StorageToBillOf(ctx, userID)
	} else {
		ivs, err = b.store.StorageToBill(ctx)
	}
	if err != nil {
		return err
	}
	now := b.now()
	for _, iv := range ivs {
		if userID != 0 && iv.UserID != userID {
			continue
		}
		from, _, _ := storageSpan(iv, now)
		if since.After(from) {
			from = since
		}
		to := now
		if iv.EndedAt != nil {
			_, to = pricing.BilledSpan(iv.StartedAt, *iv.EndedAt, 0)
		}
		if !to.After(from) {
			continue
		}
		lines, err := pricing.SplitRun(iv.StartedAt, from, to, iv.SizeMilliGiB, scheds[pricing.ScheduleKey(pricing.Storage, "")], true)
		if err != nil {
			return err
		}
		fn(iv, lines)
	}
	return nil
}
