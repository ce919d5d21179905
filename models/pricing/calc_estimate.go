// The calculator files (calc_*.go) are the portal's cost calculator (SPEC
// §7): what a shape costs here for a duration, what the same GPUs cost at
// cloud offers, and what owning a server costs per GPU-hour (TCO). It is
// pure: callers pass the price schedules, the cloud catalog and the
// settings in, so the math is testable without a database and the pages,
// the API and the CSV export all show the same numbers.
//
// Money is int64 micro-units of the portal currency, as in billing. The
// estimate calls the billing's own pricing functions in this package, so
// an estimate and the ledger for the same usage agree to the micro-unit.

package pricing

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Prices is this portal's price list as the billing sees it.
type Prices struct {
	Schedules map[string]Schedule // keyed by ScheduleKey
	MinCharge time.Duration       // minimum charge per run
}

// GPUModels lists the GPU models that have a rate, sorted.
func (p Prices) GPUModels() []string {
	var out []string
	for k := range p.Schedules {
		if m, ok := strings.CutPrefix(k, GPU+"|"); ok && m != "" {
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return out
}

// ResourceCost is one resource of an estimate.
type ResourceCost struct {
	Resource      string // GPU, MIG, Slice, CPU, Memory, Storage
	GPUModel      string
	QuantityMilli int64
	// RateMicros is the rate in force at the start: per unit-hour, or per
	// GiB-month for storage.
	RateMicros int64
	PerHour    int64 // held for one hour from the start
	PerDay     int64 // 24 hours
	PerMonth   int64 // 730 hours (the storage month)
	Total      int64 // over the requested duration
}

// EstimateResult is the cost of a shape for a duration at this portal.
type EstimateResult struct {
	Input EstimateInput
	Start time.Time
	// Runs × BilledRunSeconds is the metered time: RunSeconds rounded up to
	// the minimum charge where shorter.
	Runs             int64
	RunSeconds       int64
	BilledRunSeconds int64
	CalendarSeconds  int64
	MinChargeApplied bool
	// RateChangeAt is the first change of a rate this shape is priced at
	// inside the spans priced (a day, a month, the whole span), zero when
	// none: those columns then count hours at different rates, and the
	// month read as if it were 730 hours at today's rate.
	RateChangeAt time.Time
	Resources    []ResourceCost
	PerHour      int64
	PerDay       int64
	PerMonth     int64
	ComputeTotal int64 // GPU, CPU and memory over the runs
	StorageTotal int64 // the home volume over the calendar span
	Total        int64
}

// GPUSeconds is the GPU time of the estimate (GPUs × requested seconds),
// what a cloud would bill for the same work.
func (r *EstimateResult) GPUSeconds() int64 {
	return int64(r.Input.Shape.GPUCount) * r.Runs * r.RunSeconds
}

// resourceField names the input field to blame for a resource without a rate.
func resourceField(resource string) string {
	switch resource {
	case GPU:
		return "gpu_model"
	case CPU:
		return "cpu_cores"
	case Memory:
		return "memory_gib"
	default:
		return "storage_gib"
	}
}

// Estimate prices in at p. start is when the span begins (in.Start wins when
// set); it is truncated to the second as billing does. Runs of a daily
// duration start 24 hours apart; each is metered like a workbench run —
// BilledSpan (minimum charge), then PriceShape (split at clock hours and rate
// changes) — and the home volume is priced over the calendar span with
// Split per GiB-month, as the storage ledger does.
func Estimate(in EstimateInput, p Prices, start time.Time) (res *EstimateResult, errs FieldErrors) {
	// pricing panics rather than wraps on int64 overflow; with the input
	// limits that takes an absurd rate, and it must never become a 500.
	defer func() {
		if r := recover(); r != nil {
			res, errs = nil, FieldErrors{"_": "these amounts are too large to compute"}
		}
	}()
	if !in.Start.IsZero() {
		start = in.Start
	}
	start = start.UTC().Truncate(time.Second)
	shape := in.Shape
	if shape.GPUCount <= 0 {
		shape.GPUModel, shape.GPUCount = "", 0
	}
	// Every resource held must have a rate in force at the start.
	type held struct {
		resource, model string
		qty             int64
	}
	unitRes, unitModel := UnitRate(shape) // whole GPUs, MIG instances or slices
	parts := []held{{unitRes, unitModel, int64(shape.GPUCount) * MilliUnits},
		{CPU, "", shape.CPUMilli}, {Memory, "", MemoryMilliGiB(shape.MemoryMiB)},
		{Storage, "", in.StorageMilliGiB}}
	errs = FieldErrors{}
	var out []ResourceCost
	for _, h := range parts {
		if h.qty <= 0 {
			continue
		}
		rate, ok := p.Schedules[ScheduleKey(h.resource, h.model)].At(start)
		if !ok {
			if IsUnit(h.resource) && h.resource != GPU {
				errs.set("gpu_model", fmt.Sprintf("this portal has no %s rate for %q", h.resource, h.model))
			} else if h.resource == GPU {
				errs.set("gpu_model", fmt.Sprintf("this portal has no rate for %q; priced models: %s", h.model, strings.Join(p.GPUModels(), ", ")))
			} else {
				errs.set(resourceField(h.resource), "this portal's price list has no "+h.resource+" rate")
			}
			continue
		}
		out = append(out, ResourceCost{Resource: h.resource, GPUModel: h.model, QuantityMilli: h.qty, RateMicros: rate.Micros})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	res = &EstimateResult{Input: in, Start: start, Runs: in.Runs(), RunSeconds: in.RunSeconds(), CalendarSeconds: in.CalendarSeconds()}
	if res.Runs <= 0 || res.RunSeconds <= 0 {
		return nil, FieldErrors{"duration": "the duration must be more than 0"}
	}
	_, billedEnd := BilledSpan(start, start.Add(time.Duration(res.RunSeconds)*time.Second), p.MinCharge)
	res.BilledRunSeconds = int64(billedEnd.Sub(start) / time.Second)
	res.MinChargeApplied = res.BilledRunSeconds > res.RunSeconds

	// Compute resources: the same PriceShape call the ledger makes.
	byRes := map[string]*ResourceCost{}
	for i := range out {
		byRes[out[i].Resource] = &out[i]
	}
	first := map[string]int64{} // each resource's rate at start
	noteChange := func(resource string, l Line) {
		r, seen := first[resource]
		switch {
		case !seen && !l.Start.After(start):
			first[resource] = l.RateMicros
		case seen && r != l.RateMicros && (res.RateChangeAt.IsZero() || l.Start.Before(res.RateChangeAt)):
			res.RateChangeAt = l.Start
		}
	}
	priceCompute := func(from, to time.Time, set func(*ResourceCost, int64)) error {
		lines, err := PriceShape(shape, from, to, p.Schedules)
		if err != nil {
			return err
		}
		for _, l := range lines {
			if rc := byRes[l.Resource]; rc != nil {
				set(rc, l.Amount)
			}
			noteChange(l.Resource, l.Line)
		}
		return nil
	}
	priceStorage := func(from, to time.Time, set func(*ResourceCost, int64)) error {
		rc := byRes[Storage]
		if rc == nil {
			return nil
		}
		lines, err := Split(from, to, in.StorageMilliGiB, p.Schedules[ScheduleKey(Storage, "")], true)
		if err != nil {
			return err
		}
		set(rc, Sum(lines))
		for _, l := range lines {
			noteChange(Storage, l)
		}
		return nil
	}
	both := func(from, to time.Time, set func(*ResourceCost, int64)) error {
		if err := priceCompute(from, to, set); err != nil {
			return err
		}
		return priceStorage(from, to, set)
	}
	for _, span := range []struct {
		hours int64
		set   func(*ResourceCost, int64)
	}{
		{1, func(rc *ResourceCost, a int64) { rc.PerHour = checkedAdd(rc.PerHour, a) }},
		{24, func(rc *ResourceCost, a int64) { rc.PerDay = checkedAdd(rc.PerDay, a) }},
		{HoursPerMonth, func(rc *ResourceCost, a int64) { rc.PerMonth = checkedAdd(rc.PerMonth, a) }},
	} {
		if err := both(start, start.Add(time.Duration(span.hours)*time.Hour), span.set); err != nil {
			return nil, FieldErrors{"_": err.Error()}
		}
	}
	total := func(rc *ResourceCost, a int64) { rc.Total = checkedAdd(rc.Total, a) }
	for d := range res.Runs {
		from := start.Add(time.Duration(d) * 24 * time.Hour)
		if err := priceCompute(from, from.Add(time.Duration(res.BilledRunSeconds)*time.Second), total); err != nil {
			return nil, FieldErrors{"_": err.Error()}
		}
	}
	if err := priceStorage(start, start.Add(time.Duration(res.CalendarSeconds)*time.Second), total); err != nil {
		return nil, FieldErrors{"_": err.Error()}
	}
	for _, rc := range out {
		res.PerHour = checkedAdd(res.PerHour, rc.PerHour)
		res.PerDay = checkedAdd(res.PerDay, rc.PerDay)
		res.PerMonth = checkedAdd(res.PerMonth, rc.PerMonth)
		if rc.Resource == Storage {
			res.StorageTotal = rc.Total
		} else {
			res.ComputeTotal = checkedAdd(res.ComputeTotal, rc.Total)
		}
	}
	res.Total = checkedAdd(res.ComputeTotal, res.StorageTotal)
	res.Resources = out
	return res, nil
}

// checkedAdd adds amounts, panicking (caught by Estimate) rather than
// wrapping around.
func checkedAdd(a, b int64) int64 {
	c := a + b
	if (c > a) != (b > 0) {
		panic("calculator: overflow")
	}
	return c
}
