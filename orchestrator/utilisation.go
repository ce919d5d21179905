package orchestrator

import (
	"math/big"
	"sort"
	"time"

	"workbench/models"
	"workbench/models/pricing"
)

// Utilisation and idle cost (SPEC §6 rule 9: reported, never charged).
//
// Everything is worked out from the per-minute GPU rollup, one row per GPU
// and minute the sampler saw it:
//   - available: every GPU-minute in the rollup (a GPU the portal did not
//     watch, e.g. while it was down, is not counted as capacity);
//   - allocated: the GPU-minutes a workbench held;
//   - busy: allocated time weighted by the minute's mean SM utilisation of
//     the readable samples (a minute at 25% is a quarter busy);
//   - unread: allocated minutes whose utilisation could not be read at all.
//     They are neither busy nor idle ("could not read" is never idle);
//   - idle cost: unheld minutes, and the idle part of held readable minutes,
//     priced at the GPU model's rate in force at that minute. A model with no
//     rate has no idle cost.

// UtilFigures are the figures of one row of the report. Times are in
// GPU-milliseconds (exact sums of the minute fractions).
type UtilFigures struct {
	AvailableMs  int64
	AllocatedMs  int64
	BusyMs       int64
	UnreadHeldMs int64
	// HeldLowMs is the held time of minutes whose mean SM utilisation was
	// readable and below the idle threshold (default 5%): the plain
	// "GPU-hours held at <5%" reading of idle capacity, beside the
	// utilisation-weighted held-idle time.
	HeldLowMs int64
	// UnitHeldMs is the part of AllocatedMs held as MIG instances or
	// shared slices: each held unit minute counts as the unit's fraction
	// of its GPU (units held ÷ units on the GPU), in GPU-milliseconds.
	UnitHeldMs int64
	// EnergyMJ is the energy measured in the row's minutes (a unit's:
	// its share); EnergyMinutes counts the minutes it was measured in
	// (0: not available, never 0 J).
	EnergyMJ      int64
	EnergyMinutes int64
	// The money is priced once at the end: per rate in force, the idle
	// milliseconds, so no rounding happens per minute.
	unheld   rateMs
	heldIdle rateMs
	heldLow  rateMs
}

// rateMs sums milliseconds per hourly rate (rates change rarely: a slice).
type rateMs []struct{ rate, ms int64 }

func (r *rateMs) add(rate, ms int64) {
	for i := range *r {
		if (*r)[i].rate == rate {
			(*r)[i].ms += ms
			return
		}
	}
	*r = append(*r, struct{ rate, ms int64 }{rate, ms})
}

// micros prices the sums: Σ rate × ms / 3 600 000, rounded once.
func (r rateMs) micros() int64 {
	n := new(big.Int)
	for _, x := range r {
		n.Add(n, new(big.Int).Mul(big.NewInt(x.rate), big.NewInt(x.ms)))
	}
	n.Add(n, big.NewInt(1_800_000))
	return n.Quo(n, big.NewInt(3_600_000)).Int64()
}

// UnheldCostMicros is the cost of capacity nobody held.
func (f UtilFigures) UnheldCostMicros() int64 { return f.unheld.micros() }

// HeldIdleCostMicros is the cost of capacity held but idle.
func (f UtilFigures) HeldIdleCostMicros() int64 { return f.heldIdle.micros() }

// HeldLowCostMicros is the cost of the held minutes below the idle threshold.
func (f UtilFigures) HeldLowCostMicros() int64 { return f.heldLow.micros() }

// IdleHeldMs is the held, readable, not busy time.
func (f UtilFigures) IdleHeldMs() int64 { return f.AllocatedMs - f.UnreadHeldMs - f.BusyMs }

// UsedPercent is busy over the readable held time (0 when none).
func (f UtilFigures) UsedPercent() int {
	read := f.AllocatedMs - f.UnreadHeldMs
	if read <= 0 {
		return 0
	}
	return int((f.BusyMs*100 + read/2) / read)
}

func (f *UtilFigures) add(m utilMinute) {
	ms := m.ms
	f.AvailableMs += ms
	if m.energyRead {
		f.EnergyMJ += m.energyMJ
		f.EnergyMinutes++
	}
	if !m.held {
		if ms > 0 {
			f.unheld.add(m.rate, ms)
		}
		return
	}
	f.AllocatedMs += ms
	if m.unit {
		f.UnitHeldMs += ms
	}
	if !m.read {
		f.UnreadHeldMs += ms
		return
	}
	f.BusyMs += m.busyMs
	f.heldIdle.add(m.rate, ms-m.busyMs)
	if m.low {
		f.HeldLowMs += ms
		f.heldLow.add(m.rate, ms)
	}
}

const minuteMs = 60_000

// merge adds o's figures to f's.
func (f *UtilFigures) merge(o *UtilFigures) {
	f.AvailableMs += o.AvailableMs
	f.AllocatedMs += o.AllocatedMs
	f.BusyMs += o.BusyMs
	f.UnreadHeldMs += o.UnreadHeldMs
	f.HeldLowMs += o.HeldLowMs
	f.UnitHeldMs += o.UnitHeldMs
	f.EnergyMJ += o.EnergyMJ
	f.EnergyMinutes += o.EnergyMinutes
	for _, x := range o.heldLow {
		f.heldLow.add(x.rate, x.ms)
	}
	for _, x := range o.unheld {
		f.unheld.add(x.rate, x.ms)
	}
	for _, x := range o.heldIdle {
		f.heldIdle.add(x.rate, x.ms)
	}
}

// utilMinute is one rollup row as the report sees it.
type utilMinute struct {
	// ms is the GPU-milliseconds the row stands for: a whole GPU's minute,
	// or a held unit's fraction of it, or what of a MIG or shared GPU's
	// minute nobody held.
	ms         int64
	unit       bool // held as a MIG instance or a slice
	held, read bool
	low        bool // read, and the mean below the idle threshold
	busyMs     int64
	rate       int64
	energyMJ   int64
	energyRead bool
}

// UtilRow is one keyed row: a bucket start, GPU model, user, group or
// workbench.
type UtilRow struct {
	Key   string
	Start time.Time // buckets only
	Model string    // ByGPU only
	// BucketAvailableMs and BucketBusyMs are, for a ByGPU row, its
	// available and busy time per bucket of the report (Buckets' order):
	// the per-GPU sparkline.
	BucketAvailableMs, BucketBusyMs []int64
	UtilFigures
}

// UtilReport is the dashboard over [From, To).
type UtilReport struct {
	From, To time.Time
	Bucket   string // day, week or month
	Total    UtilFigures
	Buckets  []UtilRow // in time order, empty buckets included
	ByModel  []UtilRow
	ByUser   []UtilRow
	ByGroup  []UtilRow // a user in several groups counts in each
	// TopIdle are the workbenches that held the most idle GPU time.
	TopIdle []UtilRow
	// ByGPU are the whole GPUs, keyed by UUID (Model names the model).
	ByGPU []UtilRow
	// ByUnit are the MIG instances (keyed by MIG UUID, over every holder)
	// and shared slices' holders (keyed by GPU UUID and holder), from the
	// per-unit rollup: unit-hours, not GPU-hours, so they are not in the
	// other rows. A slice holder's "available" is the time it held.
	ByUnit []UnitUtilRow
	// IdleThresholdPercent is the threshold of HeldLowMs.
	IdleThresholdPercent uint32
}

// UnitUtilRow is one unit's figures.
type UnitUtilRow struct {
	Kind     string // models.UnitMIG or UnitSlice
	UnitUUID string
	GPUUUID  string
	Profile  string
	Model    string
	// Holder is "user/workbench" of a slice holder ("" for a MIG
	// instance, whose row adds up every holder it had).
	Holder string
	UtilFigures
}

// UtilHolder is whom a workbench's GPU time belongs to.
type UtilHolder struct {
	Workbench string // its name
	User      string
	Groups    []string
}

// UtilBuckets are the report's bucket sizes.
var UtilBuckets = []string{"day", "week", "month"}

// BucketStart is the start of t's bucket (UTC; weeks start on Monday).
func BucketStart(t time.Time, bucket string) time.Time {
	t = t.UTC()
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	switch bucket {
	case "week":
		return day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
	case "month":
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return day
}

func nextBucket(t time.Time, bucket string) time.Time {
	switch bucket {
	case "week":
		return t.AddDate(0, 0, 7)
	case "month":
		return t.AddDate(0, 1, 0)
	}
	return t.AddDate(0, 0, 1)
}

// ComputeUtilisation builds the report from rollup rows of [from, to).
// holders maps workbench ids to their owner (a workbench not in it is
// reported under its id, user "unknown"); modelOf gives the model of a GPU
// whose row predates the model column; scheds are the rate schedules.
func ComputeUtilisation(rows []models.GPUMinute, from, to time.Time, bucket string, holders map[string]UtilHolder,
	modelOf map[string]string, scheds map[string]pricing.Schedule) UtilReport {
	return ComputeUtilisationUnits(rows, nil, from, to, bucket, holders, modelOf, scheds, 5)
}

// ComputeUtilisationUnits is ComputeUtilisation with the per-unit rows
// (ByUnit) and the idle threshold of HeldLowMs.
func ComputeUtilisationUnits(rows []models.GPUMinute, units []models.GPUUnitMinute, from, to time.Time, bucket string,
	holders map[string]UtilHolder, modelOf map[string]string, scheds map[string]pricing.Schedule, thresholdPercent uint32) UtilReport {
	rep := UtilReport{From: from, To: to, Bucket: bucket, IdleThresholdPercent: thresholdPercent}
	byGPU := map[string]*UtilFigures{}
	gpuModel := map[string]string{}
	bucketIdx := map[int64]int{}
	for b := BucketStart(from, bucket); b.Before(to); b = nextBucket(b, bucket) {
		bucketIdx[b.Unix()] = len(rep.Buckets)
		rep.Buckets = append(rep.Buckets, UtilRow{Key: b.Format("2006-01-02"), Start: b})
	}
	byModel, byUser, byGroup, byWB := map[string]*UtilFigures{}, map[string]*UtilFigures{}, map[string]*UtilFigures{}, map[string]*UtilFigures{}
	get := func(m map[string]*UtilFigures, k string) *UtilFigures {
		f := m[k]
		if f == nil {
			f = &UtilFigures{}
			m[k] = f
		}
		return f
	}
	starts := make([]int64, len(rep.Buckets)) // bucket starts, ascending
	for i, b := range rep.Buckets {
		starts[i] = b.Start.Unix()
	}
	scheduleOf := map[string]pricing.Schedule{} // by model: one key per model, not per row
	rateAt := func(model string, minute int64) int64 {
		sched, ok := scheduleOf[model]
		if !ok {
			sched = scheds[pricing.ScheduleKey(pricing.GPU, model)]
			scheduleOf[model] = sched
		}
		if rate, ok := sched.At(time.Unix(minute, 0)); ok {
			return rate.Micros
		}
		return 0
	}
	wbName := map[string]string{} // workbench id → "user/workbench" for TopIdle
	// GPU-level rows: the totals, buckets, models and GPUs.
	gpuAvail, gpuBusy := map[string][]int64{}, map[string][]int64{}
	addGPU := func(gpuUUID, model string, minute int64, m utilMinute) {
		rep.Total.add(m)
		get(byGPU, gpuUUID).add(m)
		gpuModel[gpuUUID] = model
		if i := sort.Search(len(starts), func(i int) bool { return starts[i] > minute }) - 1; i >= 0 {
			rep.Buckets[i].add(m)
			if gpuAvail[gpuUUID] == nil {
				gpuAvail[gpuUUID], gpuBusy[gpuUUID] = make([]int64, len(starts)), make([]int64, len(starts))
			}
			gpuAvail[gpuUUID][i] += m.ms
			if m.held && m.read {
				gpuBusy[gpuUUID][i] += m.busyMs
			}
		}
		get(byModel, model).add(m)
	}
	// Holder rows: users, groups and workbenches.
	addHolder := func(wbID string, m utilMinute) {
		h, ok := holders[wbID]
		if !ok {
			h = UtilHolder{Workbench: wbID, User: "unknown"}
		}
		get(byUser, h.User).add(m)
		groups := h.Groups
		if len(groups) == 0 {
			groups = []string{""}
		}
		for _, g := range groups {
			get(byGroup, g).add(m)
		}
		if _, ok := wbName[wbID]; !ok {
			wbName[wbID] = h.User + "/" + h.Workbench
		}
		get(byWB, wbID).add(m)
	}
	pieces, heldMs := heldUnitPieces(units, from, to)
	type gpuMinute struct {
		gpu    string
		minute int64
	}
	hasRow := map[gpuMinute]bool{}
	for _, r := range rows {
		if r.Minute < from.Unix() || r.Minute >= to.Unix() {
			continue
		}
		model := r.GPUModel
		if model == "" {
			model = modelOf[r.GPUUUID]
		}
		m := minuteOf(r.WorkbenchID != "", r.UtilSamples, r.UtilSum, r.EnergyMJ, r.EnergySamples, thresholdPercent)
		m.rate = rateAt(model, r.Minute)
		k := gpuMinute{r.GPUUUID, r.Minute}
		hasRow[k] = true
		if !m.held {
			// A MIG or shared GPU: what its held units cover is theirs
			// (below); only the rest is capacity nobody held.
			m.ms = minuteMs - heldMs[gpuMinuteKey{r.GPUUUID, r.Minute}]
		}
		addGPU(r.GPUUUID, model, r.Minute, m)
		if m.held {
			addHolder(r.WorkbenchID, m)
		}
	}
	// Held MIG instances and slices, each as its fraction of its GPU's
	// minute, with its own utilisation (unread — most MIG drivers — is
	// neither busy nor idle) and, for its holder, its share of the energy.
	// The GPU's measured energy is in its own row; a piece brings energy
	// to the GPU-level rows only where that row is not in the report (a
	// user's own report has the units they held, not the GPUs).
	for _, p := range pieces {
		r := p.row
		model := r.GPUModel
		if model == "" {
			model = modelOf[r.GPUUUID]
		}
		m := minuteOf(true, r.UtilSamples, r.UtilSum, r.EnergyMJ, r.EnergySamples, thresholdPercent)
		m.ms, m.unit, m.rate = p.ms, true, rateAt(model, r.Minute)
		if m.read {
			m.busyMs = min(max(p.ms*r.UtilSum/(100*r.UtilSamples), 0), p.ms)
		}
		gm := m
		if hasRow[gpuMinute{r.GPUUUID, r.Minute}] {
			gm.energyMJ, gm.energyRead = 0, false
		}
		addGPU(r.GPUUUID, model, r.Minute, gm)
		addHolder(r.WorkbenchID, m)
	}
	byName := map[string]*UtilFigures{} // "user/workbench"
	for id, f := range byWB {
		if prev := byName[wbName[id]]; prev != nil { // two workbenches of one user with one name (a deleted one)
			f.merge(prev)
		}
		byName[wbName[id]] = f
	}
	rep.ByModel = sortedRows(byModel, func(f UtilFigures) int64 { return f.AvailableMs })
	rep.ByGPU = sortedRows(byGPU, func(UtilFigures) int64 { return 0 }) // by UUID
	for i := range rep.ByGPU {
		rep.ByGPU[i].Model = gpuModel[rep.ByGPU[i].Key]
		rep.ByGPU[i].BucketAvailableMs, rep.ByGPU[i].BucketBusyMs = gpuAvail[rep.ByGPU[i].Key], gpuBusy[rep.ByGPU[i].Key]
	}
	rep.ByUnit = unitRows(units, from, to, holders, scheds, thresholdPercent)
	rep.ByUser = sortedRows(byUser, func(f UtilFigures) int64 { return f.AllocatedMs })
	rep.ByGroup = sortedRows(byGroup, func(f UtilFigures) int64 { return f.AllocatedMs })
	top := sortedRows(byName, func(f UtilFigures) int64 { return f.IdleHeldMs() })
	for _, r := range top {
		if len(rep.TopIdle) == 10 || r.IdleHeldMs() <= 0 {
			break
		}
		rep.TopIdle = append(rep.TopIdle, r)
	}
	return rep
}

// sortedRows lists a map's rows, largest by first, then by key.
func sortedRows(m map[string]*UtilFigures, by func(UtilFigures) int64) []UtilRow {
	out := make([]UtilRow, 0, len(m))
	for k, f := range m {
		out = append(out, UtilRow{Key: k, UtilFigures: *f})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := by(out[i].UtilFigures), by(out[j].UtilFigures)
		return a > b || (a == b && out[i].Key < out[j].Key)
	})
	return out
}

// minuteOf is one rollup minute as the report sees it. A minute with old
// rows' energy but no count (rolled up before energy_samples existed)
// counts as measured when it has energy.
func minuteOf(held bool, utilSamples, utilSum, energyMJ, energySamples int64, thresholdPercent uint32) utilMinute {
	m := utilMinute{ms: minuteMs, held: held, read: utilSamples > 0, energyMJ: energyMJ, energyRead: energySamples > 0 || energyMJ != 0}
	if m.read {
		m.busyMs = minuteMs * utilSum / (100 * utilSamples)
		m.busyMs = min(max(m.busyMs, 0), minuteMs)
		m.low = utilSum < int64(thresholdPercent)*utilSamples
	}
	return m
}

// gpuMinuteKey is a GPU's minute.
type gpuMinuteKey struct {
	gpu    string
	minute int64
}

// unitPiece is a held unit minute as a fraction of its GPU's minute.
type unitPiece struct {
	row models.GPUUnitMinute
	ms  int64 // GPU-milliseconds: minuteMs × units ÷ units on the GPU
}

// heldUnitPieces turns the held unit minutes of [from, to) into fractions
// of their GPUs' minutes (units held ÷ units on the GPU; a minute's pieces
// never add up to more than the minute), and sums them per GPU minute.
// Rows without the GPU's unit count (before migration 00130) are left
// out of the GPU-hour figures: their fraction is unknown.
func heldUnitPieces(units []models.GPUUnitMinute, from, to time.Time) ([]unitPiece, map[gpuMinuteKey]int64) {
	var out []unitPiece
	held := map[gpuMinuteKey]int64{}
	for _, r := range units {
		if r.WorkbenchID == "" || r.GPUUnits <= 0 || r.Minute < from.Unix() || r.Minute >= to.Unix() {
			continue
		}
		k := gpuMinuteKey{r.GPUUUID, r.Minute}
		ms := min(minuteMs*max(r.Units, 1)/r.GPUUnits, minuteMs-held[k])
		if ms <= 0 {
			continue
		}
		held[k] += ms
		out = append(out, unitPiece{row: r, ms: ms})
	}
	return out, held
}

// unitRows builds ByUnit: MIG instances priced at their profile's rate,
// slice holders at the slice rate of the GPU model.
func unitRows(units []models.GPUUnitMinute, from, to time.Time, holders map[string]UtilHolder,
	scheds map[string]pricing.Schedule, thresholdPercent uint32) []UnitUtilRow {
	type key struct{ unit, holder string }
	at := map[key]int{}
	var out []UnitUtilRow
	for _, r := range units {
		if r.Minute < from.Unix() || r.Minute >= to.Unix() {
			continue
		}
		k := key{unit: r.UnitUUID}
		holder := ""
		if r.Kind == models.UnitSlice {
			h, ok := holders[r.WorkbenchID]
			if !ok {
				h = UtilHolder{Workbench: r.WorkbenchID, User: "unknown"}
			}
			holder = h.User + "/" + h.Workbench
			k.holder = r.WorkbenchID
		}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, UnitUtilRow{Kind: r.Kind, UnitUUID: r.UnitUUID, GPUUUID: r.GPUUUID, Profile: r.Profile, Model: r.GPUModel, Holder: holder})
		}
		m := minuteOf(r.WorkbenchID != "", r.UtilSamples, r.UtilSum, r.EnergyMJ, r.EnergySamples, thresholdPercent)
		sk := pricing.ScheduleKey(pricing.Slice, r.GPUModel)
		if r.Kind == models.UnitMIG {
			sk = pricing.ScheduleKey(pricing.MIG, r.Profile)
		}
		if rate, ok := scheds[sk].At(time.Unix(r.Minute, 0)); ok {
			m.rate = rate.Micros
		}
		out[i].add(m)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].GPUUUID != out[j].GPUUUID {
			return out[i].GPUUUID < out[j].GPUUUID
		}
		if out[i].UnitUUID != out[j].UnitUUID {
			return out[i].UnitUUID < out[j].UnitUUID
		}
		return out[i].Holder < out[j].Holder
	})
	return out
}
