// Package pricing turns usage into money with pure functions: the billing
// ledger and the cost calculator both call these, so an estimate and an
// invoice for the same shape and time can never disagree.
//
// Money is int64 micro-units of the portal's currency. Rates are micro-units
// per unit-hour (GPU-hour, core-hour, GiB-hour) or, for storage, per
// GiB-month, where a month is 730 hours (8760 / 12).
package pricing

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"sort"
	"strings"
	"time"
)

// Resource kinds priced by the portal.
const (
	GPU     = "gpu"   // per GPU-hour, by GPU model
	MIG     = "mig"   // per MIG instance-hour, by MIG profile ("1g.10gb")
	Slice   = "slice" // per slice-hour of a shared GPU, by GPU model
	CPU     = "cpu"
	Memory  = "memory"
	Storage = "storage"
)

// HoursPerMonth defines the storage month: 8760 h / 12.
const HoursPerMonth = 730

// MilliUnits is the fixed-point scale of quantities: 1 core = 1000.
const MilliUnits = 1000

// Rate is a price that applies from Effective on.
type Rate struct {
	Effective time.Time
	Micros    int64 // per unit-hour; per GiB-month for storage
}

// Schedule is the rate history of one resource (one GPU model), any order.
type Schedule []Rate

// At returns the rate in force at t (the latest Effective ≤ t) and whether
// one exists.
func (s Schedule) At(t time.Time) (Rate, bool) {
	var best Rate
	found := false
	for _, r := range s {
		if !r.Effective.After(t) && (!found || r.Effective.After(best.Effective)) {
			best, found = r, true
		}
	}
	return best, found
}

// changesIn lists the rate change times strictly inside (from, to), sorted.
func (s Schedule) changesIn(from, to time.Time) []time.Time {
	var out []time.Time
	for _, r := range s {
		if r.Effective.After(from) && r.Effective.Before(to) {
			out = append(out, r.Effective)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

// Line is one priced piece of usage: a span inside one clock hour at one rate.
type Line struct {
	// Start and End lie on the run's own second grid (the run's start plus
	// whole seconds), so End - Start is exactly Seconds; see SplitRun.
	Start, End time.Time
	Seconds    int64
	Quantity   int64 // milli-units held (2 GPUs = 2000, 0.5 cores = 500, 16 GiB = 16000)
	RateMicros int64
	Amount     int64 // micro-units
}

// ChargedSeconds is what a run from start to end is charged (SPEC §6 rules
// 1, 3 and 10): ⌈end − start⌉ from the engine's own timestamps — the partial
// second rounded up once, the start never truncated — or minimum when that
// is more.
func ChargedSeconds(start, end time.Time, minimum time.Duration) int64 {
	d := end.Sub(start)
	if d < 0 {
		d = 0
	}
	secs := int64((d + time.Second - 1) / time.Second)
	if min := int64(minimum / time.Second); secs < min {
		secs = min
	}
	return secs
}

// BilledSpan applies the metering rules to a run from start to end: it
// returns the start (unchanged, fractions kept) and the billed end, start
// plus ChargedSeconds.
func BilledSpan(start, end time.Time, minimum time.Duration) (time.Time, time.Time) {
	return start, start.Add(time.Duration(ChargedSeconds(start, end, minimum)) * time.Second)
}

// chargedBy is how many of a run's charged seconds have begun by t: the
// run's seconds are anchored at its start, and a second counts once it has
// begun (⌈t − anchor⌉). Cutting a run anywhere and adding the parts'
// chargedBy differences telescopes to the whole run's count, so splitting
// never adds or loses a second. A second that straddles a cut (an hour or a
// rate change) falls in the part before the cut, at that part's rate.
func chargedBy(anchor, t time.Time) int64 {
	d := t.Sub(anchor)
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// Split cuts [start, end) at clock-hour boundaries (UTC) and at rate changes,
// and prices each piece for quantity milli-units. perMonth marks storage
// rates (per GiB-month). Pieces with no rate in force are an error: usage is
// never silently free. end - start should be whole seconds (BilledSpan).
func Split(start, end time.Time, quantity int64, sched Schedule, perMonth bool) ([]Line, error) {
	return SplitRun(start, start, end, quantity, sched, perMonth)
}

// SplitRun prices the part [from, to) of a run that began at anchor (from ≥
// anchor; to at most the run's billed end): the piece between two cuts gets
// chargedBy(anchor, cut) differences as its seconds, so the pieces of a run
// billed in any number of calls add up to exactly its charged seconds.
func SplitRun(anchor, from, to time.Time, quantity int64, sched Schedule, perMonth bool) ([]Line, error) {
	return splitRunScaled(anchor, from, to, quantity, MilliUnits, sched, perMonth)
}

// splitRunScaled is SplitRun for quantity/scale units held (scale MilliUnits
// for GPUs, cores and storage; MiBPerGiB for memory in MiB). The lines'
// Quantity is always milli-units (rounded when scale is not MilliUnits).
func splitRunScaled(anchor, from, to time.Time, quantity, scale int64, sched Schedule, perMonth bool) ([]Line, error) {
	milli := quantity
	if scale != MilliUnits {
		milli = divRound(quantity*MilliUnits, scale)
	}
	var lines []Line
	cuts := sched.changesIn(from, to)
	cur := from
	for cur.Before(to) {
		next := cur.Truncate(time.Hour).Add(time.Hour)
		for len(cuts) > 0 && !cuts[0].After(cur) {
			cuts = cuts[1:]
		}
		if len(cuts) > 0 && cuts[0].Before(next) {
			next = cuts[0]
		}
		if next.After(to) {
			next = to
		}
		rate, ok := sched.At(cur)
		if !ok {
			return nil, fmt.Errorf("no rate in force at %s", cur.Format(time.RFC3339))
		}
		s0, s1 := chargedBy(anchor, cur), chargedBy(anchor, next)
		if secs := s1 - s0; secs > 0 {
			amount, ok := amountScaled(rate.Micros, quantity, scale, secs, perMonth)
			if perMonth {
				// Storage carries its remainders: a piece costs what the
				// volume has cost at this rate by the piece's end less what
				// it had by its start, each rounded once, so a month of
				// hour lines adds up to size × rate × time (to a
				// micro-unit), billed in any number of calls. Rounded hour
				// by hour, 100 GiB at 0.10 per GiB-month billed 13 699 for
				// 13 698.63 an hour, and a 31-day month 0.000275 more than
				// it costs. A compute line keeps its own rounding: its
				// amount is rate × quantity × seconds, which a reader can
				// rebuild, and its rates per hour leave whole hours exact.
				upTo, ok1 := amountScaled(rate.Micros, quantity, scale, s1, perMonth)
				before, ok0 := amountScaled(rate.Micros, quantity, scale, s0, perMonth)
				amount, ok = upTo-before, ok1 && ok0
			}
			if !ok {
				return nil, fmt.Errorf("%d milli-units at %s an hour for %d s: %w", milli, FormatRate(rate.Micros), secs, ErrTooLarge)
			}
			lines = append(lines, Line{Start: anchor.Add(time.Duration(s0) * time.Second), End: anchor.Add(time.Duration(s1) * time.Second),
				Seconds: secs, Quantity: milli, RateMicros: rate.Micros, Amount: amount})
		}
		cur = next
	}
	return lines, nil
}

// Amount prices quantity milli-units held for secs seconds at rate,
// rounded to the nearest micro-unit (half away from zero). It panics when
// the amount does not fit int64 (billing goes through Split, which says so
// as ErrTooLarge instead).
func Amount(rate, quantity, secs int64, perMonth bool) int64 {
	a, ok := amountScaled(rate, quantity, MilliUnits, secs, perMonth)
	if !ok {
		panic("pricing: overflow")
	}
	return a
}

// ErrTooLarge is an amount beyond int64 micro-units.
var ErrTooLarge = errors.New("the amount is too large to compute")

// amountScaled prices quantity/scale units held for secs seconds at rate,
// rounded to the nearest micro-unit (half away from zero). The product is
// taken in 128 bits: the highest rate an admin may set (a million per
// unit-hour) times 512 GiB of memory times an hour's seconds is beyond
// int64 though the amount is not, and such a product panicked the billing
// pass (a portal that then crashed on every start). ok is false only when
// the amount itself does not fit.
func amountScaled(rate, quantity, scale, secs int64, perMonth bool) (int64, bool) {
	den := uint64(3600 * scale)
	if perMonth {
		den *= HoursPerMonth
	}
	neg := (rate < 0) != (quantity < 0) != (secs < 0)
	hi, lo := bits.Mul64(abs64(rate), abs64(quantity))
	h1, lo := bits.Mul64(lo, abs64(secs))
	h2, l2 := bits.Mul64(hi, abs64(secs))
	hi, carry := bits.Add64(h1, l2, 0)
	if h2 != 0 || carry != 0 {
		return 0, false
	}
	// Round half away from zero: add den/2 to the magnitude, then divide.
	lo, carry = bits.Add64(lo, den/2, 0)
	hi += carry
	if hi >= den {
		return 0, false // the quotient needs more than 64 bits
	}
	q, _ := bits.Div64(hi, lo, den)
	if q > math.MaxInt64 {
		return 0, false
	}
	if neg {
		return -int64(q), true
	}
	return int64(q), true
}

func abs64(v int64) uint64 {
	if v < 0 {
		return uint64(-v)
	}
	return uint64(v)
}

func divRound(n, d int64) int64 {
	if n >= 0 {
		return (n + d/2) / d
	}
	return -((-n + d/2) / d)
}

// Sum adds the amounts of lines.
func Sum(lines []Line) int64 {
	var t int64
	for _, l := range lines {
		t += l.Amount
	}
	return t
}

// Format renders micro-units as money with two decimals, rounded, e.g.
// 12345678 → "12.35"; Micros.Format does it per currency.
func Format(micros int64) string { return Micros(micros).Decimal("") }

// FormatExact renders micro-units with as many decimals as they need, at
// least two ("0.0008", "0.001334", "12.50"): for small sums that two
// decimals would both print as 0.00 ("the 0.00 left cannot cover 0.00").
func FormatExact(micros int64) string {
	s := FormatNumber(big.NewRat(micros, 1_000_000), 6)
	switch i := strings.IndexByte(s, '.'); {
	case i < 0:
		s += ".00"
	case len(s)-i == 2:
		s += "0"
	}
	return s
}

// FormatRate renders micro-units with two to four decimals (see Micros.Rate).
func FormatRate(micros int64) string { return Micros(micros).Rate() }

// Shape is what a workbench holds: the quantities that are priced.
// GPUCount counts units of UnitKind (GPU when empty): whole GPUs of
// GPUModel, MIG instances of UnitProfile, or slices of a shared GPUModel.
type Shape struct {
	GPUModel    string
	GPUCount    int
	UnitKind    string
	UnitProfile string
	CPUMilli    int64 // cores × 1000
	MemoryMiB   int64 // memory in MiB; priced per GiB-hour exactly (MiB/1024)
	// Tier is the GPU price tier ("" standard, TierPreemptible): its GPU
	// hours are priced from the schedule TierKey(Tier, GPUModel).
	Tier string
}

// MiBPerGiB is the scale of memory quantities: a GiB-hour rate is charged
// rate × MiB × seconds / (1024 × 3600), exactly like cores are charged
// rate × milli-cores × seconds / (1000 × 3600).
const MiBPerGiB = 1024

// MemoryMilliGiB is a MiB amount as milli-GiB for display and for the
// ledger's quantity_milli column (rounded; the amount is priced from MiB).
func MemoryMilliGiB(mib int64) int64 { return divRound(mib*MilliUnits, MiBPerGiB) }

// ResourceLine is a Line of one resource.
type ResourceLine struct {
	Resource string
	GPUModel string
	Line
}

// ScheduleKey names the schedule of a resource: "gpu|<model>", "mig|<profile>",
// "slice|<model>", "cpu|", …
func ScheduleKey(resource, gpuModel string) string {
	if !IsUnit(resource) {
		gpuModel = ""
	}
	return resource + "|" + gpuModel
}

// IsUnit reports whether resource is a GPU unit kind (priced per unit-hour
// of a model or profile).
func IsUnit(resource string) bool { return resource == GPU || resource == MIG || resource == Slice }

// UnitRate names the schedule that prices shape's GPU units: its resource
// (the unit kind) and the key's model (the MIG profile for MIG instances,
// the GPU model otherwise).
func UnitRate(shape Shape) (resource, model string) {
	switch shape.UnitKind {
	case MIG:
		return MIG, shape.UnitProfile
	case Slice:
		return Slice, shape.GPUModel
	}
	return GPU, shape.GPUModel
}

// PriceShape prices shape held over [start, end): every resource split at
// hours and rate changes. This one function serves the ledger and the cost
// calculator. The span should be whole seconds (see BilledSpan).
func PriceShape(shape Shape, start, end time.Time, scheds map[string]Schedule) ([]ResourceLine, error) {
	return PriceRun(shape, start, start, end, scheds)
}

// PriceRun prices the part [from, to) of a run of shape that began at
// anchor (see SplitRun): the ledger bills an open run hour by hour with it.
func PriceRun(shape Shape, anchor, from, to time.Time, scheds map[string]Schedule) ([]ResourceLine, error) {
	type part struct {
		resource, model string
		qty, scale      int64 // qty/scale units held
	}
	parts := []part{{CPU, "", shape.CPUMilli, MilliUnits}, {Memory, "", shape.MemoryMiB, MiBPerGiB}}
	if shape.GPUCount > 0 {
		res, model := UnitRate(shape)
		parts = append([]part{{res, model, int64(shape.GPUCount) * MilliUnits, MilliUnits}}, parts...)
	}
	var out []ResourceLine
	for _, p := range parts {
		if p.qty == 0 {
			continue
		}
		key := ScheduleKey(p.resource, p.model)
		if IsUnit(p.resource) && shape.Tier != "" {
			key = UnitTierKey(p.resource, shape.Tier, p.model)
		}
		lines, err := splitRunScaled(anchor, from, to, p.qty, p.scale, scheds[key], false)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", p.resource, p.model, err)
		}
		for _, l := range lines {
			out = append(out, ResourceLine{Resource: p.resource, GPUModel: p.model, Line: l})
		}
	}
	return out, nil
}

// SumResources adds the amounts of resource lines.
func SumResources(lines []ResourceLine) int64 {
	var t int64
	for _, l := range lines {
		t += l.Amount
	}
	return t
}
