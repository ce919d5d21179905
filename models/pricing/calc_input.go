package pricing

import (
	"fmt"
	"math/big"
	"net/url"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// FieldErrors maps an input field to the message shown next to it. It is
// the only error the parsers and calculations return for bad input, so a
// form can point at the field and the API can answer 400 with the field.
type FieldErrors map[string]string

func (e FieldErrors) Error() string {
	keys := make([]string, 0, len(e))
	for k := range e {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ": " + e[k]
	}
	return strings.Join(parts, "; ")
}

// First is the first field at fault, in name order (for an error code).
func (e FieldErrors) First() string {
	first := ""
	for k := range e {
		if first == "" || k < first {
			first = k
		}
	}
	return first
}

func (e FieldErrors) set(field, msg string) {
	if _, ok := e[field]; !ok {
		e[field] = msg
	}
}

// orNil returns nil for no errors, so callers can write `if errs != nil`.
func (e FieldErrors) orNil() FieldErrors {
	if len(e) == 0 {
		return nil
	}
	return e
}

// fields reads named values from a query string (or a JSON body turned into
// one) and records what is wrong with each.
type fields struct {
	v    url.Values
	errs FieldErrors
}

// raw is the trimmed value of name and whether it was given (non-empty).
func (f *fields) raw(name string) (string, bool) {
	s := strings.TrimSpace(f.v.Get(name))
	return s, s != ""
}

// text reads a short free-text field (a name): printable, at most max bytes.
func (f *fields) text(name string, max int) string {
	s, _ := f.raw(name)
	if len(s) > max {
		f.errs.set(name, fmt.Sprintf("is too long (at most %d characters)", max))
		return ""
	}
	if !utf8.ValidString(s) || strings.IndexFunc(s, unicode.IsControl) >= 0 {
		f.errs.set(name, "contains characters that are not allowed")
		return ""
	}
	return s
}

// bound is a closed or open end of an allowed range.
type bound struct {
	v    *big.Rat
	open bool // the end itself is not allowed
}

func incl(s string) bound { return bound{v: rat(s)} }
func excl(s string) bound { return bound{v: rat(s), open: true} }

// number reads a decimal in [lo, hi] (either end may be open). A missing
// value gives def. percent allows "35%" for 0.35 (fraction fields). The
// message names the allowed range so the user can fix the value.
func (f *fields) number(name string, def *big.Rat, lo, hi bound, percent bool) *big.Rat {
	s, ok := f.raw(name)
	if !ok {
		return def
	}
	scale := ratInt(1)
	if percent && strings.HasSuffix(s, "%") {
		s, scale = strings.TrimSpace(strings.TrimSuffix(s, "%")), ratInt(100)
	}
	r, err := parseNumber(s)
	if err != nil {
		f.errs.set(name, err.Error())
		return def
	}
	r = quo(r, scale)
	if percent && scale.Cmp(ratInt(1)) == 0 && r.Cmp(ratInt(1)) > 0 && r.Cmp(ratInt(100)) <= 0 {
		// "50" in a fraction field is 5000 %: most likely a percentage
		// without its sign. Say how it is read and both ways to write it.
		f.errs.set(name, fmt.Sprintf("%s would be %s: write a fraction (%s) or a percentage (%s)",
			s, FormatNumber(mul(r, ratInt(100)), 4)+"%", FormatNumber(quo(r, ratInt(100)), 6), s+"%"))
		return def
	}
	c1, c2 := r.Cmp(lo.v), r.Cmp(hi.v)
	if c1 < 0 || (lo.open && c1 == 0) || c2 > 0 || (hi.open && c2 == 0) {
		f.errs.set(name, rangeMessage(lo, hi, percent))
		return def
	}
	return r
}

func rangeMessage(lo, hi bound, percent bool) string {
	show := func(r *big.Rat) string {
		if percent {
			return FormatNumber(mul(r, ratInt(100)), 4) + "%"
		}
		return FormatNumber(r, 6)
	}
	if lo.open && lo.v.Sign() == 0 {
		return fmt.Sprintf("must be more than 0 and at most %s", show(hi.v))
	}
	return fmt.Sprintf("must be between %s and %s", show(lo.v), show(hi.v))
}

// integer reads a whole number in [lo, hi].
func (f *fields) integer(name string, def, lo, hi int64) int64 {
	s, ok := f.raw(name)
	if !ok {
		return def
	}
	r, err := parseNumber(s)
	if err != nil {
		f.errs.set(name, "must be a whole number")
		return def
	}
	if !r.IsInt() {
		f.errs.set(name, "must be a whole number")
		return def
	}
	if r.Cmp(ratInt(lo)) < 0 || r.Cmp(ratInt(hi)) > 0 {
		f.errs.set(name, fmt.Sprintf("must be between %d and %d", lo, hi))
		return def
	}
	return r.Num().Int64()
}

// scaled reads a decimal in [lo, hi] with at most log10(scale) decimals and
// returns it × scale (cores → milli-cores, GiB → milli-GiB).
func (f *fields) scaled(name string, def int64, lo, hi bound, scale int64) int64 {
	r := f.number(name, nil, lo, hi, false)
	if r == nil {
		return def
	}
	x := mul(r, ratInt(scale))
	if !x.IsInt() {
		msg := fmt.Sprintf("has too many decimals (at most %d)", len(fmt.Sprint(scale))-1)
		if scale == MiBPerGiB {
			msg = "must be a whole number of MiB (a multiple of 1/1024 GiB)"
		}
		f.errs.set(name, msg)
		return def
	}
	return x.Num().Int64()
}

// Duration modes of an estimate.
const (
	DurationDaily = "daily" // hours per day × days: one run a day
	DurationTotal = "total" // one run of total hours
)

// Limits of an estimate: beyond them a value is surely a typo, and they keep
// every amount far inside int64.
const (
	MaxGPUCount   = 64
	MaxCPUCores   = 1024
	MaxMemoryGiB  = 16384
	MaxStorageGiB = 1_000_000
	MaxDays       = 1095  // three years
	MaxTotalHours = 26280 // three years
)

// EstimateInput is what to price: a shape held for a duration.
type EstimateInput struct {
	// Flavor names the flavor the shape came from ("" = a custom shape). The
	// caller resolves it and fills Shape with the flavor's priced shape.
	Flavor          string
	Shape           Shape
	StorageMilliGiB int64
	Duration        string   // DurationDaily or DurationTotal
	HoursPerDay     *big.Rat // daily
	Days            int64    // daily
	TotalHours      *big.Rat // total
	// Start is when the priced span begins (zero: the current clock hour).
	// Pricing splits at hours and rate changes exactly like the ledger, so
	// the same start and length give the same amount to the micro-unit.
	Start time.Time
}

// DefaultEstimate is a working month: 8 hours a day for 22 days.
func DefaultEstimate() EstimateInput {
	return EstimateInput{Duration: DurationDaily, HoursPerDay: ratInt(8), Days: 22, TotalHours: ratInt(176),
		Shape: Shape{CPUMilli: 4000, MemoryMiB: 16 * 1024}}
}

// Runs is how many runs the duration is made of (one a day, or one).
func (in EstimateInput) Runs() int64 {
	if in.Duration == DurationTotal {
		return 1
	}
	return in.Days
}

// RunSeconds is the length of one run in whole seconds (a partial second
// counts as a whole one, as in billing).
func (in EstimateInput) RunSeconds() int64 {
	h := in.HoursPerDay
	if in.Duration == DurationTotal {
		h = in.TotalHours
	}
	if h == nil {
		return 0
	}
	x := mul(h, ratInt(3600))
	q := new(big.Int).Quo(x.Num(), x.Denom())
	if !x.IsInt() {
		q.Add(q, big.NewInt(1))
	}
	return q.Int64()
}

// CalendarSeconds is how long the span lasts on the calendar: the home
// volume exists (and is billed) all that time.
func (in EstimateInput) CalendarSeconds() int64 {
	if in.Duration == DurationTotal {
		return in.RunSeconds()
	}
	return in.Days * 24 * 3600
}

// ParseEstimate reads an estimate from query values (the page's URL, or an
// API body turned into values): flavor, gpu_model, gpu_count, cpu_cores,
// memory_gib (or memory_mib), storage_gib, duration (daily|total), hours_per_day, days,
// total_hours, start (RFC 3339). Missing values take def's.
func ParseEstimate(v url.Values, def EstimateInput) (EstimateInput, FieldErrors) {
	f := &fields{v: v, errs: FieldErrors{}}
	in := def
	in.Flavor = f.text("flavor", 100)
	if _, given := f.raw("flavor"); !given {
		// No flavor named: a custom shape if any of its fields is given
		// (an API call), else the default (the user's last flavor).
		in.Flavor = def.Flavor
		for _, k := range []string{"gpu_model", "gpu_count", "cpu_cores", "memory_gib", "memory_mib"} {
			if _, ok := f.raw(k); ok {
				in.Flavor = ""
			}
		}
	}
	if in.Flavor == "custom" {
		in.Flavor = ""
	}
	if in.Flavor == "" {
		in.Shape.GPUModel = f.text("gpu_model", 100)
		if _, given := f.raw("gpu_model"); !given {
			in.Shape.GPUModel = def.Shape.GPUModel
		}
		in.Shape.GPUCount = int(f.integer("gpu_count", int64(def.Shape.GPUCount), 0, MaxGPUCount))
		in.Shape.CPUMilli = f.scaled("cpu_cores", def.Shape.CPUMilli, incl("0"), incl(fmt.Sprint(MaxCPUCores)), 1000)
		// memory_gib takes decimals down to one MiB (1/1024 GiB); memory_mib,
		// when given, says the same in whole MiB and wins.
		in.Shape.MemoryMiB = f.scaled("memory_gib", def.Shape.MemoryMiB, incl("0"), incl(fmt.Sprint(MaxMemoryGiB)), MiBPerGiB)
		in.Shape.MemoryMiB = f.integer("memory_mib", in.Shape.MemoryMiB, 0, MaxMemoryGiB*MiBPerGiB)
		if in.Shape.GPUCount > 0 && in.Shape.GPUModel == "" {
			f.errs.set("gpu_model", "choose the GPU model")
		}
		if in.Shape.GPUCount == 0 {
			in.Shape.GPUModel = ""
		}
		if in.Shape.GPUCount == 0 && in.Shape.CPUMilli == 0 && in.Shape.MemoryMiB == 0 && len(f.errs) == 0 {
			f.errs.set("cpu_cores", "the shape holds nothing to price: give it GPUs, CPU cores or memory")
		}
	}
	in.StorageMilliGiB = f.scaled("storage_gib", def.StorageMilliGiB, incl("0"), incl(fmt.Sprint(MaxStorageGiB)), 1000)

	mode, given := f.raw("duration")
	switch {
	case !given:
		// A URL with only total_hours means a total.
		if _, th := f.raw("total_hours"); th {
			if _, hd := f.raw("hours_per_day"); !hd {
				mode = DurationTotal
				break
			}
		}
		mode = def.Duration
	case mode != DurationDaily && mode != DurationTotal:
		f.errs.set("duration", "must be daily (hours per day × days) or total (total hours)")
		mode = def.Duration
	}
	if mode == "" {
		mode = DurationDaily
	}
	in.Duration = mode
	in.HoursPerDay = f.number("hours_per_day", def.HoursPerDay, excl("0"), incl("24"), false)
	in.Days = f.integer("days", def.Days, 1, MaxDays)
	in.TotalHours = f.number("total_hours", def.TotalHours, excl("0"), incl(fmt.Sprint(MaxTotalHours)), false)
	if mode == DurationDaily && in.HoursPerDay == nil {
		f.errs.set("hours_per_day", "is required")
	}
	if mode == DurationTotal && in.TotalHours == nil {
		f.errs.set("total_hours", "is required")
	}
	if s, ok := f.raw("start"); ok {
		t, err := time.Parse(time.RFC3339, s)
		switch {
		case err != nil:
			f.errs.set("start", "must be a time like 2026-01-31T09:00:00Z")
		case t.Year() < 2000 || t.Year() > 2200:
			f.errs.set("start", "must be between the years 2000 and 2200")
		default:
			in.Start = t.UTC()
		}
	}
	return in, f.errs.orNil()
}

// Values encodes the input as query values, the inverse of ParseEstimate:
// the shareable URL and the CSV link of a calculation.
func (in EstimateInput) Values() url.Values {
	v := url.Values{}
	if in.Flavor != "" {
		v.Set("flavor", in.Flavor)
	} else {
		v.Set("flavor", "custom")
		if in.Shape.GPUCount > 0 {
			v.Set("gpu_model", in.Shape.GPUModel)
		}
		v.Set("gpu_count", fmt.Sprint(in.Shape.GPUCount))
		v.Set("cpu_cores", FormatNumber(new(big.Rat).SetFrac64(in.Shape.CPUMilli, 1000), 3))
		v.Set("memory_gib", FormatNumber(new(big.Rat).SetFrac64(in.Shape.MemoryMiB, MiBPerGiB), 10))
	}
	if in.StorageMilliGiB > 0 {
		v.Set("storage_gib", FormatNumber(new(big.Rat).SetFrac64(in.StorageMilliGiB, 1000), 3))
	}
	v.Set("duration", in.Duration)
	if in.Duration == DurationTotal {
		v.Set("total_hours", FormatNumber(in.TotalHours, 6))
	} else {
		v.Set("hours_per_day", FormatNumber(in.HoursPerDay, 6))
		v.Set("days", fmt.Sprint(in.Days))
	}
	if !in.Start.IsZero() {
		v.Set("start", in.Start.UTC().Format(time.RFC3339))
	}
	return v
}

// TCOInput is a server to own (SPEC §7). Money is in the portal currency's
// major unit, watts in W, fractions in 0–1.
type TCOInput struct {
	GPUModel          string
	GPUsPerServer     int64
	ServerPrice       *big.Rat
	DepreciationYears *big.Rat
	ResidualValue     *big.Rat
	GPUActiveWatts    *big.Rat
	GPUIdleWatts      *big.Rat
	OverheadWatts     *big.Rat
	PUE               *big.Rat
	ElectricityPerKWh *big.Rat
	ColoPerKWMonth    *big.Rat
	RackPerMonth      *big.Rat
	MaintenanceRate   *big.Rat
	StaffPerYear      *big.Rat
	Utilization       *big.Rat
	// TargetUtilization is where the suggested internal rate is computed.
	TargetUtilization *big.Rat
	// HorizonYears is the span of the cumulative cost chart (default: the
	// depreciation period).
	HorizonYears *big.Rat
}

// TCO limits: beyond them a value is surely a typo.
const (
	MaxGPUsPerServer = 64
	MaxHorizonYears  = 30
)

// tcoFieldNames lists the request fields (SPEC §8) in form order.
var tcoFieldNames = []string{"gpu_model", "gpus_per_server", "server_price", "depreciation_years", "residual_value",
	"gpu_active_watts", "gpu_idle_watts", "overhead_watts", "pue", "electricity_per_kwh", "colo_per_kw_month",
	"rack_per_month", "maintenance_rate", "staff_per_year", "utilization", "target_utilization", "horizon_years"}

// TCOFieldNames are the names ParseTCO reads (SPEC §8 plus
// target_utilization and horizon_years).
func TCOFieldNames() []string { return append([]string(nil), tcoFieldNames...) }

// ParseTCO reads a TCO request from query values; missing values take def's.
// Every value is range-checked so that no formula divides by zero and no
// result is absurd: utilisation must be above 0, PUE at least 1, idle watts
// at most active watts, the residual value at most the price.
func ParseTCO(v url.Values, def TCOInput) (TCOInput, FieldErrors) {
	f := &fields{v: v, errs: FieldErrors{}}
	in := def
	if _, ok := f.raw("gpu_model"); ok {
		in.GPUModel = f.text("gpu_model", 100)
	}
	in.GPUsPerServer = f.integer("gpus_per_server", def.GPUsPerServer, 1, MaxGPUsPerServer)
	in.ServerPrice = f.number("server_price", def.ServerPrice, incl("0"), incl("1000000000"), false)
	in.DepreciationYears = f.number("depreciation_years", def.DepreciationYears, excl("0"), incl("30"), false)
	in.ResidualValue = f.number("residual_value", def.ResidualValue, incl("0"), incl("1000000000"), false)
	in.GPUActiveWatts = f.number("gpu_active_watts", def.GPUActiveWatts, incl("0"), incl("5000"), false)
	in.GPUIdleWatts = f.number("gpu_idle_watts", def.GPUIdleWatts, incl("0"), incl("5000"), false)
	in.OverheadWatts = f.number("overhead_watts", def.OverheadWatts, incl("0"), incl("100000"), false)
	in.PUE = f.number("pue", def.PUE, incl("1"), incl("3"), false)
	in.ElectricityPerKWh = f.number("electricity_per_kwh", def.ElectricityPerKWh, incl("0"), incl("100"), false)
	in.ColoPerKWMonth = f.number("colo_per_kw_month", def.ColoPerKWMonth, incl("0"), incl("100000"), false)
	in.RackPerMonth = f.number("rack_per_month", def.RackPerMonth, incl("0"), incl("10000000"), false)
	in.MaintenanceRate = f.number("maintenance_rate", def.MaintenanceRate, incl("0"), incl("1"), true)
	in.StaffPerYear = f.number("staff_per_year", def.StaffPerYear, incl("0"), incl("100000000"), false)
	in.Utilization = f.number("utilization", def.Utilization, excl("0"), incl("1"), true)
	in.TargetUtilization = f.number("target_utilization", def.TargetUtilization, excl("0"), incl("1"), true)
	in.HorizonYears = f.number("horizon_years", def.HorizonYears, excl("0"), incl(fmt.Sprint(MaxHorizonYears)), false)
	if _, ok := f.raw("horizon_years"); !ok && in.DepreciationYears != nil {
		in.HorizonYears = in.DepreciationYears
	}
	if in.ServerPrice != nil && in.ResidualValue != nil && in.ResidualValue.Cmp(in.ServerPrice) > 0 {
		f.errs.set("residual_value", "cannot be more than the server price")
	}
	if in.GPUActiveWatts != nil && in.GPUIdleWatts != nil && in.GPUIdleWatts.Cmp(in.GPUActiveWatts) > 0 {
		f.errs.set("gpu_idle_watts", "cannot be more than the active watts")
	}
	if in.Utilization != nil && in.Utilization.Sign() <= 0 {
		f.errs.set("utilization", "must be more than 0: an idle server has no cost per GPU-hour")
	}
	for _, name := range tcoFieldNames {
		if name == "gpu_model" {
			continue
		}
		if tcoNumber(&in, name) == nil {
			f.errs.set(name, "is required")
		}
	}
	if in.GPUModel == "" {
		f.errs.set("gpu_model", "choose the GPU model")
	}
	return in, f.errs.orNil()
}

// tcoNumber returns the numeric field called name (nil when unset; for
// gpus_per_server a non-nil placeholder when set).
func tcoNumber(in *TCOInput, name string) *big.Rat {
	switch name {
	case "gpus_per_server":
		if in.GPUsPerServer < 1 {
			return nil
		}
		return ratInt(in.GPUsPerServer)
	case "server_price":
		return in.ServerPrice
	case "depreciation_years":
		return in.DepreciationYears
	case "residual_value":
		return in.ResidualValue
	case "gpu_active_watts":
		return in.GPUActiveWatts
	case "gpu_idle_watts":
		return in.GPUIdleWatts
	case "overhead_watts":
		return in.OverheadWatts
	case "pue":
		return in.PUE
	case "electricity_per_kwh":
		return in.ElectricityPerKWh
	case "colo_per_kw_month":
		return in.ColoPerKWMonth
	case "rack_per_month":
		return in.RackPerMonth
	case "maintenance_rate":
		return in.MaintenanceRate
	case "staff_per_year":
		return in.StaffPerYear
	case "utilization":
		return in.Utilization
	case "target_utilization":
		return in.TargetUtilization
	case "horizon_years":
		return in.HorizonYears
	}
	return nil
}

// Values encodes the input as query values (SPEC §8 names), the inverse of
// ParseTCO.
func (in TCOInput) Values() url.Values {
	v := url.Values{}
	v.Set("gpu_model", in.GPUModel)
	for _, name := range tcoFieldNames[1:] {
		if r := tcoNumber(&in, name); r != nil {
			v.Set(name, FormatNumber(r, 6))
		}
	}
	return v
}

// Value is the canonical text of field name (for re-filling a form).
func (in TCOInput) Value(name string) string {
	if name == "gpu_model" {
		return in.GPUModel
	}
	return FormatNumber(tcoNumber(&in, name), 6)
}
