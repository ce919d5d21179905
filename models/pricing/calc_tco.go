package pricing

import (
	"math/big"
	"strings"
)

// HoursPerYear is the year of the TCO formulas (SPEC §7).
const HoursPerYear = 8760

// monthsPerYear: a TCO month is 730 hours, the billing's storage month.
const monthsPerYear = 12

// TableUtilizations are the rows of the utilisation table (SPEC §7).
var TableUtilizations = []string{"0.25", "0.5", "0.75", "1"}

// yearCost is the exact annual cost of the server at one utilisation.
type yearCost struct {
	u            *big.Rat
	kWh          *big.Rat
	depreciation *big.Rat
	energy       *big.Rat
	colo         *big.Rat
	maintenance  *big.Rat
	staff        *big.Rat
	total        *big.Rat
}

// running is everything but depreciation: what owning costs per year once
// the server is paid for.
func (y yearCost) running() *big.Rat {
	return add(add(y.energy, y.colo), add(y.maintenance, y.staff))
}

// peakKW is the colocation kW: the server's peak draw at the wall,
// (gpus·W_active + W_overhead)·PUE / 1000 (SPEC §8).
func (in TCOInput) peakKW() *big.Rat {
	w := add(mul(ratInt(in.GPUsPerServer), in.GPUActiveWatts), in.OverheadWatts)
	return quo(mul(w, in.PUE), ratInt(1000))
}

// annual applies SPEC §7 at utilisation u:
//
//	energy kWh/yr = (gpus·(W_active·u + W_idle·(1−u)) + W_overhead)/1000 · 8760 · PUE
//	annual cost  = (price − residual)/years + energy·price_kWh + colo + maintenance + staff
//
// where colo = colo_per_kW_month · peak kW · 12 + rack_per_month · 12 and
// maintenance = maintenance_rate · price.
func (in TCOInput) annual(u *big.Rat) yearCost {
	g := ratInt(in.GPUsPerServer)
	gpuW := add(mul(in.GPUActiveWatts, u), mul(in.GPUIdleWatts, sub(ratInt(1), u)))
	watts := add(mul(g, gpuW), in.OverheadWatts)
	kWh := mul(mul(quo(watts, ratInt(1000)), ratInt(HoursPerYear)), in.PUE)
	y := yearCost{u: u, kWh: kWh}
	y.depreciation = quo(sub(in.ServerPrice, in.ResidualValue), in.DepreciationYears)
	y.energy = mul(kWh, in.ElectricityPerKWh)
	y.colo = add(mul(mul(in.ColoPerKWMonth, in.peakKW()), ratInt(monthsPerYear)), mul(in.RackPerMonth, ratInt(monthsPerYear)))
	y.maintenance = mul(in.MaintenanceRate, in.ServerPrice)
	y.staff = in.StaffPerYear
	y.total = add(y.depreciation, y.running())
	return y
}

// gpuHours is the GPU-hours a year delivers at utilisation u.
func (in TCOInput) gpuHours(u *big.Rat) *big.Rat {
	return mul(ratInt(in.GPUsPerServer*HoursPerYear), u)
}

// AnnualCost is the yearly cost of owning at one utilisation, in
// micro-units, and what a used GPU-hour costs.
type AnnualCost struct {
	Utilization        float64 // fraction
	EnergyKWh          float64 // per year
	DepreciationMicros int64
	EnergyMicros       int64
	ColocationMicros   int64
	MaintenanceMicros  int64
	StaffMicros        int64
	TotalMicros        int64
	// OwnedPerGPUHourMicros = annual cost / (gpus · 8760 · u).
	OwnedPerGPUHourMicros int64
}

func (in TCOInput) annualCost(u *big.Rat) AnnualCost {
	y := in.annual(u)
	return AnnualCost{Utilization: ratFloat(u, 4), EnergyKWh: ratFloat(y.kWh, 1),
		DepreciationMicros: toMicros(y.depreciation), EnergyMicros: toMicros(y.energy), ColocationMicros: toMicros(y.colo),
		MaintenanceMicros: toMicros(y.maintenance), StaffMicros: toMicros(y.staff), TotalMicros: toMicros(y.total),
		OwnedPerGPUHourMicros: toMicros(quo(y.total, in.gpuHours(u)))}
}

// BreakEven compares owning with one cloud offer of the server's GPU model.
type BreakEven struct {
	PricedOffer
	// BreakEvenUtilization = annual cost (at the expected utilisation) /
	// (gpus · 8760 · offer rate), a fraction: above it owning is cheaper.
	// Above 1 owning never pays against this offer (Reachable false).
	BreakEvenUtilization float64
	Reachable            bool
	// BreakEvenMonths is when the cumulative cost of owning (price paid up
	// front plus running costs) falls below renting the same GPU-hours at
	// the expected utilisation; PaysBack is false when renting costs less
	// per month than running the server, so owning never catches up.
	BreakEvenMonths float64
	PaysBack        bool
	// RentPerYearMicros is renting gpus · 8760 · u GPU-hours a year.
	RentPerYearMicros int64
}

// Series is one line of the cumulative cost chart.
type Series struct {
	Label   string
	Own     bool    // the owning line
	Derived bool    // an estimated cloud tier
	Points  []int64 // cumulative micro-units at Chart.Months[i]
}

// Chart is the cumulative cost of owning vs renting over the horizon.
type Chart struct {
	Months []int // x values, from 0 to the horizon
	Series []Series
}

// MaxMicros is the largest value of any series (for the y axis).
func (c Chart) MaxMicros() int64 {
	var m int64
	for _, s := range c.Series {
		for _, p := range s.Points {
			m = max(m, p)
		}
	}
	return m
}

// TCOResult is the whole owning-vs-renting calculation.
type TCOResult struct {
	Input  TCOInput
	PeakKW float64
	// Annual is the cost at the expected utilisation.
	Annual              AnnualCost
	RunningPerMonth     int64 // micro-units: energy, colocation, maintenance, staff
	HorizonMonths       int
	Table               []AnnualCost // at TableUtilizations
	Offers              []BreakEven  // offers of the GPU model, cheapest first
	Chart               Chart
	Target              AnnualCost // at the target utilisation
	SuggestedRateMicros int64      // owned cost per GPU-hour at the target
}

// chartSeriesOffers is how many cloud offers the chart draws.
const chartSeriesOffers = 3

// maxChartPoints bounds the points per series (a 30-year horizon has 360
// months; one point per month is more than a 640-pixel chart can show).
const maxChartPoints = 121

// TCO runs the owning-vs-renting calculation for a validated input against
// the priced cloud offers (all models; those of in.GPUModel's family are
// used).
func TCO(in TCOInput, offers []PricedOffer) *TCOResult {
	u := in.Utilization
	y := in.annual(u)
	res := &TCOResult{Input: in, PeakKW: ratFloat(in.peakKW(), 3), Annual: in.annualCost(u)}
	runningMonth := quo(y.running(), ratInt(monthsPerYear))
	res.RunningPerMonth = toMicros(runningMonth)
	for _, s := range TableUtilizations {
		res.Table = append(res.Table, in.annualCost(rat(s)))
	}
	res.Target = in.annualCost(in.TargetUtilization)
	res.SuggestedRateMicros = res.Target.OwnedPerGPUHourMicros

	// GPU-hours rented per month to match the expected use of the server.
	rentHoursMonth := quo(in.gpuHours(u), ratInt(monthsPerYear))
	for _, o := range ForModel(offers, in.GPUModel) {
		b := BreakEven{PricedOffer: o}
		r := fromMicros(o.RateMicros)
		if r.Sign() > 0 {
			be := quo(y.total, mul(ratInt(in.GPUsPerServer*HoursPerYear), r))
			b.BreakEvenUtilization = ratFloat(be, 4)
			b.Reachable = be.Cmp(ratInt(1)) <= 0
		}
		rentMonth := mul(rentHoursMonth, r)
		b.RentPerYearMicros = toMicros(mul(rentMonth, ratInt(monthsPerYear)))
		if gain := sub(rentMonth, runningMonth); gain.Sign() > 0 {
			b.PaysBack = true
			b.BreakEvenMonths = ratFloat(quo(in.ServerPrice, gain), 1)
		}
		res.Offers = append(res.Offers, b)
	}

	// The chart: owning vs the three cheapest offers, listed prices before
	// estimates (a derived spot tier is nearly always cheapest, and an
	// interruptible estimate is a poor stand-in for a server of one's own).
	months := ceilInt(mul(in.HorizonYears, ratInt(monthsPerYear)))
	months = max(1, min(months, MaxHorizonYears*monthsPerYear))
	res.HorizonMonths = months
	step := (months + maxChartPoints - 2) / (maxChartPoints - 1)
	for m := 0; ; m += step {
		if m >= months {
			res.Chart.Months = append(res.Chart.Months, months)
			break
		}
		res.Chart.Months = append(res.Chart.Months, m)
	}
	own := Series{Label: "Owning", Own: true}
	for _, m := range res.Chart.Months {
		own.Points = append(own.Points, toMicros(add(in.ServerPrice, mul(runningMonth, ratInt(int64(m))))))
	}
	res.Chart.Series = append(res.Chart.Series, own)
	var picked []BreakEven
	for _, derived := range []bool{false, true} {
		for _, b := range res.Offers {
			if b.Derived == derived && len(picked) < chartSeriesOffers {
				picked = append(picked, b)
			}
		}
	}
	for _, b := range picked {
		s := Series{Label: b.Label(), Derived: b.Derived}
		rentMonth := mul(rentHoursMonth, fromMicros(b.RateMicros))
		for _, m := range res.Chart.Months {
			s.Points = append(s.Points, toMicros(mul(rentMonth, ratInt(int64(m)))))
		}
		res.Chart.Series = append(res.Chart.Series, s)
	}
	return res
}

func ceilInt(r *big.Rat) int {
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if m.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsInt64() || q.Int64() > 1<<30 {
		return 1 << 30
	}
	return int(q.Int64())
}

// modelDefaults are typical purchase prices (USD per GPU, all-in for an
// HGX/PCIe server) and board powers (W) by GPU family, to start a TCO from.
// They are starting points stated on the page, not quotes.
var modelDefaults = map[string]struct {
	usdPerGPU      int64
	activeW, idleW int64
}{
	"B200": {50_000, 1000, 120},
	"H200": {40_000, 700, 80},
	"H100": {35_000, 700, 75},
	"A100": {20_000, 400, 55},
	"L40S": {10_000, 350, 35},
	"L4":   {3_500, 72, 16},
}

// DefaultTCO is a starting TCO for gpus GPUs of model, with typical values
// (stated on the page): all-in price per GPU and board power by family,
// 5-year depreciation with 10% residual, server overhead 500 W + 250 W per
// GPU, PUE 1.4, 0.15 per kWh, colocation 150 per kW-month, maintenance 8%
// of the price a year, 10 000 a year of staff time, 50% utilisation, a 70%
// target. usdRate converts the USD figures to the portal currency (1 for
// USD; money defaults stay USD figures when no rate is known).
func DefaultTCO(model string, gpus int64, usdRate *big.Rat) TCOInput {
	if gpus < 1 || gpus > MaxGPUsPerServer {
		gpus = 8
	}
	if usdRate == nil || usdRate.Sign() <= 0 {
		usdRate = ratInt(1)
	}
	d, ok := modelDefaults[Family(model)]
	if !ok {
		d.usdPerGPU, d.activeW, d.idleW = 10_000, 300, 40
	}
	money := func(usd string) *big.Rat { return roundTo(mul(rat(usd), usdRate), 2) }
	price := roundTo(mul(ratInt(d.usdPerGPU*gpus), usdRate), 0)
	return TCOInput{
		GPUModel:          strings.TrimSpace(model),
		GPUsPerServer:     gpus,
		ServerPrice:       price,
		DepreciationYears: ratInt(5),
		ResidualValue:     roundTo(quo(price, ratInt(10)), 0),
		GPUActiveWatts:    ratInt(d.activeW),
		GPUIdleWatts:      ratInt(d.idleW),
		OverheadWatts:     ratInt(500 + 250*gpus),
		PUE:               rat("1.4"),
		ElectricityPerKWh: money("0.15"),
		ColoPerKWMonth:    money("150"),
		RackPerMonth:      ratInt(0),
		MaintenanceRate:   rat("0.08"),
		StaffPerYear:      money("10000"),
		Utilization:       rat("0.5"),
		TargetUtilization: rat("0.7"),
		HorizonYears:      ratInt(5),
	}
}

// roundTo rounds r to the given decimals.
func roundTo(r *big.Rat, decimals int) *big.Rat {
	v, _ := roundScaled(r, pow10(decimals))
	return new(big.Rat).SetFrac64(v, pow10(decimals))
}

// TypicalValues explains the defaults next to each TCO field.
var TypicalValues = map[string]string{
	"gpus_per_server":     "HGX/DGX servers hold 8",
	"server_price":        "all-in: GPUs, CPUs, memory, NICs, storage; an 8 × H100 server is about 250 000–300 000 USD",
	"depreciation_years":  "usually 4–5 years",
	"residual_value":      "resale value at the end; about 10% of the price",
	"gpu_active_watts":    "board power under load: H100/H200 SXM 700 W, A100 400 W, L40S 350 W",
	"gpu_idle_watts":      "an idle data-centre GPU draws 50–100 W",
	"overhead_watts":      "CPUs, memory, NICs, fans: 2–4 kW for an 8-GPU server",
	"pue":                 "power usage effectiveness: 1.1 (hyperscale) to 1.6 (a typical machine room)",
	"electricity_per_kwh": "the price per kWh at the meter",
	"colo_per_kw_month":   "colocation priced per kW of peak draw; 0 if you use a rack price or your own room",
	"rack_per_month":      "colocation priced per rack (or space) per month; 0 if priced per kW",
	"maintenance_rate":    "support contract and spare parts: 5–10% of the price a year",
	"staff_per_year":      "the share of an engineer's yearly cost this server takes",
	"utilization":         "the share of GPU-hours actually used; shared clusters reach 45–72% with scheduling",
	"target_utilization":  "the utilisation the internal rate should recover costs at",
	"horizon_years":       "span of the cumulative cost chart; the depreciation period by default",
}
