package pricing

import (
	"math"
	"net/url"
	"strings"
	"testing"
	"time"
)

const h100 = "NVIDIA H100 80GB HBM3"

// testPrices is a price list like the seeded one: 3.00 per H100-hour, 0.02
// per core-hour, 0.005 per GiB-hour, 0.10 per GiB-month, from the epoch.
func testPrices(minCharge time.Duration) Prices {
	epoch := time.Unix(0, 0).UTC()
	at := func(m int64) Schedule { return Schedule{{Effective: epoch, Micros: m}} }
	return Prices{MinCharge: minCharge, Schedules: map[string]Schedule{
		ScheduleKey(GPU, h100):   at(3_000_000),
		ScheduleKey(CPU, ""):     at(20_000),
		ScheduleKey(Memory, ""):  at(5_000),
		ScheduleKey(Storage, ""): at(100_000),
	}}
}

var calcT0 = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func mustEstimate(t *testing.T, q string, p Prices) *EstimateResult {
	t.Helper()
	v, err := url.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	in, errs := ParseEstimate(v, DefaultEstimate())
	if errs != nil {
		t.Fatalf("parse %q: %v", q, errs)
	}
	res, errs := Estimate(in, p, calcT0)
	if errs != nil {
		t.Fatalf("estimate %q: %v", q, errs)
	}
	return res
}

func TestEstimateHandComputed(t *testing.T) {
	p := testPrices(60 * time.Second)
	cases := []struct {
		name                             string
		query                            string
		perHour, perDay, perMonth, total int64
		billedRunSeconds, storageTotal   int64
	}{
		{
			// 1 GPU 3.00 + 8 cores 0.16 + 64 GiB 0.32 = 3.48 an hour; 8 h × 22 days = 176 h.
			name: "working month", query: "gpu_model=" + url.QueryEscape(h100) + "&gpu_count=1&cpu_cores=8&memory_gib=64&hours_per_day=8&days=22",
			perHour: 3_480_000, perDay: 24 * 3_480_000, perMonth: 730 * 3_480_000, total: 176 * 3_480_000, billedRunSeconds: 8 * 3600,
		},
		{
			// 36 s is charged as the 60 s minimum: GPU 50 000, CPU 8000 milli × 20 000 × 60 / 3.6e9 = 2666.67 → 2667,
			// memory 64 000 × 5000 × 60 / 3.6e9 = 5333.33 → 5333.
			name: "minimum charge", query: "gpu_model=" + url.QueryEscape(h100) + "&gpu_count=1&cpu_cores=8&memory_gib=64&total_hours=0.01",
			perHour: 3_480_000, perDay: 24 * 3_480_000, perMonth: 730 * 3_480_000, total: 50_000 + 2_667 + 5_333, billedRunSeconds: 60,
		},
		{
			// A CPU shape with a 100 GiB home volume over 22 days: storage is 100 000 milli-GiB × 0.10 per GiB-month,
			// 13 698.63 an hour, its hour lines carrying their remainders: the first hour 13 699, a day 328 767.12 →
			// 328 767, the 730-hour month 10.00 exactly, 528 hours 7 232 876.71 → 7 232 877 (hour lines rounded
			// one by one came to 528 × 13 699 = 7 233 072).
			name: "storage over the calendar", query: "cpu_cores=2&memory_gib=8&storage_gib=100&hours_per_day=1&days=22",
			perHour: 40_000 + 40_000 + 13_699, perDay: 24*80_000 + 328_767, perMonth: 730*80_000 + 10_000_000,
			total: 22*80_000 + 7_232_877, billedRunSeconds: 3600, storageTotal: 7_232_877,
		},
		{
			// 2.5 h in one run starting on the hour: 2 whole hours + one half.
			name: "total hours", query: "gpu_model=" + url.QueryEscape(h100) + "&gpu_count=2&cpu_cores=0&memory_gib=0&total_hours=2.5",
			perHour: 6_000_000, perDay: 24 * 6_000_000, perMonth: 730 * 6_000_000, total: 15_000_000, billedRunSeconds: 9000,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustEstimate(t, c.query, p)
			got := []int64{r.PerHour, r.PerDay, r.PerMonth, r.Total, r.BilledRunSeconds, r.StorageTotal}
			want := []int64{c.perHour, c.perDay, c.perMonth, c.total, c.billedRunSeconds, c.storageTotal}
			for i, name := range []string{"per hour", "per day", "per month", "total", "billed run seconds", "storage total"} {
				if got[i] != want[i] {
					t.Errorf("%s: got %d, want %d", name, got[i], want[i])
				}
			}
			var sum int64
			for _, l := range r.Resources {
				sum += l.Total
			}
			if sum != r.Total {
				t.Errorf("resource totals add to %d, total %d", sum, r.Total)
			}
		})
	}
}

func TestEstimateFollowsRateChanges(t *testing.T) {
	p := testPrices(0)
	key := ScheduleKey(GPU, h100)
	p.Schedules[key] = append(p.Schedules[key], Rate{Effective: calcT0.Add(2 * time.Hour), Micros: 6_000_000})
	r := mustEstimate(t, "gpu_model="+url.QueryEscape(h100)+"&gpu_count=1&cpu_cores=0&memory_gib=0&total_hours=4", p)
	if r.Total != 2*3_000_000+2*6_000_000 {
		t.Fatalf("a rate change 2 h in: total %d, want 18 000 000", r.Total)
	}
	if r.Resources[0].RateMicros != 3_000_000 {
		t.Fatalf("rate shown %d, want the one in force at the start", r.Resources[0].RateMicros)
	}
	// The change is named, so the month is not read as 730 h at the rate
	// shown; without one, no change is named.
	if !r.RateChangeAt.Equal(calcT0.Add(2 * time.Hour)) {
		t.Fatalf("rate change at %s, want %s", r.RateChangeAt, calcT0.Add(2*time.Hour))
	}
	if r := mustEstimate(t, "gpu_model="+url.QueryEscape(h100)+"&gpu_count=1&cpu_cores=0&memory_gib=0&total_hours=4", testPrices(0)); !r.RateChangeAt.IsZero() {
		t.Fatalf("no change scheduled, yet one at %s", r.RateChangeAt)
	}
	// A change 20 days out shows only in the per-month column: named too.
	p = testPrices(0)
	p.Schedules[key] = append(p.Schedules[key], Rate{Effective: calcT0.Add(20 * 24 * time.Hour), Micros: 6_000_000})
	if r := mustEstimate(t, "gpu_model="+url.QueryEscape(h100)+"&gpu_count=1&cpu_cores=0&memory_gib=0&total_hours=4", p); !r.RateChangeAt.Equal(calcT0.Add(20*24*time.Hour)) ||
		r.PerMonth == 730*r.PerHour {
		t.Fatalf("a change 20 days out: named at %s, per month %d (per hour %d)", r.RateChangeAt, r.PerMonth, r.PerHour)
	}
}

func TestEstimateFieldErrors(t *testing.T) {
	p := testPrices(60 * time.Second)
	for _, c := range []struct{ query, field string }{
		{"gpu_model=B300&gpu_count=1&total_hours=1", "gpu_model"},
		{"gpu_count=1&total_hours=1", "gpu_model"},
		{"gpu_count=-1&total_hours=1", "gpu_count"},
		{"gpu_count=65&total_hours=1", "gpu_count"},
		{"cpu_cores=1.00001&total_hours=1", "cpu_cores"},
		{"cpu_cores=NaN&total_hours=1", "cpu_cores"},
		{"cpu_cores=Inf&total_hours=1", "cpu_cores"},
		{"cpu_cores=0&memory_gib=0&gpu_count=0&total_hours=1", "cpu_cores"},
		{"memory_gib=1.00001&total_hours=1", "memory_gib"},
		{"hours_per_day=25&days=1", "hours_per_day"},
		{"hours_per_day=0&days=1", "hours_per_day"},
		{"hours_per_day=8&days=0", "days"},
		{"hours_per_day=8&days=1096", "days"},
		{"duration=total&total_hours=0", "total_hours"},
		{"duration=total&total_hours=1e30", "total_hours"},
		{"duration=weekly", "duration"},
		{"total_hours=1&start=yesterday", "start"},
		{"storage_gib=-3&total_hours=1", "storage_gib"},
	} {
		v, _ := url.ParseQuery(c.query)
		in, errs := ParseEstimate(v, DefaultEstimate())
		if errs == nil {
			_, errs = Estimate(in, p, calcT0)
		}
		if _, ok := errs[c.field]; !ok {
			t.Errorf("%s: errors %v, want one on %s", c.query, errs, c.field)
		}
	}
	// No storage rate: the storage field is at fault.
	noStorage := testPrices(0)
	delete(noStorage.Schedules, ScheduleKey(Storage, ""))
	v, _ := url.ParseQuery("cpu_cores=1&storage_gib=10&total_hours=1")
	in, _ := ParseEstimate(v, DefaultEstimate())
	if _, errs := Estimate(in, noStorage, calcT0); errs["storage_gib"] == "" {
		t.Errorf("no storage rate: %v", errs)
	}
}

func TestEstimateAbsurdRateIsAnErrorNotAPanic(t *testing.T) {
	p := testPrices(0)
	p.Schedules[ScheduleKey(GPU, h100)] = Schedule{{Effective: time.Unix(0, 0), Micros: math.MaxInt64 / 2}}
	v, _ := url.ParseQuery("gpu_model=" + url.QueryEscape(h100) + "&gpu_count=64&total_hours=100")
	in, _ := ParseEstimate(v, DefaultEstimate())
	if _, errs := Estimate(in, p, calcT0); errs["_"] == "" {
		t.Fatalf("overflowing rates: %v", errs)
	}
}

func TestEstimateValuesRoundTrip(t *testing.T) {
	for _, q := range []string{
		"gpu_model=" + url.QueryEscape(h100) + "&gpu_count=2&cpu_cores=16.5&memory_gib=128&storage_gib=12.25&hours_per_day=7.5&days=3",
		"flavor=1x+H100&storage_gib=0&duration=total&total_hours=0.25&start=2026-01-02T03:04:05Z",
	} {
		v, _ := url.ParseQuery(q)
		in, errs := ParseEstimate(v, DefaultEstimate())
		if errs != nil {
			t.Fatal(errs)
		}
		again, errs := ParseEstimate(in.Values(), DefaultEstimate())
		if errs != nil {
			t.Fatal(errs)
		}
		if again.Values().Encode() != in.Values().Encode() {
			t.Errorf("round trip of %s:\n %s\n %s", q, in.Values().Encode(), again.Values().Encode())
		}
	}
}

func TestParseNumber(t *testing.T) {
	good := map[string]string{"12": "12", "0.35": "0.35", ".5": "0.5", "-3": "-3", "2.5e3": "2500", "1E-2": "0.01", " 7 ": "7", "+4": "4"}
	for in, want := range good {
		r, err := parseNumber(in)
		if err != nil || FormatNumber(r, 6) != want {
			t.Errorf("parseNumber(%q) = %v, %v; want %s", in, r, err, want)
		}
	}
	for _, in := range []string{"", "NaN", "Inf", "-Inf", "1/3", "0x10", "1,000", "1e", "1e31", "1e999999999", "--1", ".", "1.2.3", "١٢", strings.Repeat("9", 41)} {
		if r, err := parseNumber(in); err == nil {
			t.Errorf("parseNumber(%q) = %v, want an error", in, r)
		}
	}
}

// The market research figures (Chinese cloud market, 2023 Q3): an A100 80GB at 12 per hour on
// demand and 4 on spot; reserved instances 30–50% cheaper for 1–3 years.
func TestSeedFigures(t *testing.T) {
	offers := []Offer{
		{ID: 1, Provider: "Chinese cloud market (2023 Q3 survey, provider unnamed)", Name: "A100 80GB instance", GPUModel: "A100-80GB", Tier: TierOnDemand, Currency: "CNY", PriceMicros: 12_000_000},
		{ID: 2, Provider: "Chinese cloud market (2023 Q3 survey, provider unnamed)", Name: "A100 80GB spot instance", GPUModel: "A100-80GB", Tier: TierSpot, Currency: "CNY", PriceMicros: 4_000_000},
	}
	all := Derive(offers, DefaultDiscountsBps)
	priced, missing := PriceOffers(all, Settings{Currency: "CNY"})
	if len(missing) != 0 {
		t.Fatalf("missing %v", missing)
	}
	// 10 GPU-hours of an A100; here a 6.00 CNY/h rate → 60.00.
	cmp := Compare(priced, "NVIDIA A100-SXM4-80GB", 10*3600, 60_000_000)
	byTier := map[string]Comparison{}
	for _, c := range cmp {
		byTier[c.Tier] = c
	}
	if len(cmp) != 4 {
		t.Fatalf("offers: %d, want on-demand, listed spot and two derived reserved tiers: %+v", len(cmp), cmp)
	}
	if c := byTier[TierOnDemand]; c.Cost != 120_000_000 || c.VsHereBps != -5000 {
		t.Errorf("on-demand: cost %d vs here %d bps, want 120 CNY and -50%%", c.Cost, c.VsHereBps)
	}
	if c := byTier[TierSpot]; c.Cost != 40_000_000 || c.Derived || c.VsHereBps != 5000 {
		t.Errorf("spot: %+v, want the listed 4/h (40 CNY; here 50%% more)", c)
	}
	// Spot is 2/3 below on-demand in the seed.
	if s, o := byTier[TierSpot].RateMicros, byTier[TierOnDemand].RateMicros; 10000-s*10000/o != 6667 {
		t.Errorf("spot saving %d bps", 10000-s*10000/o)
	}
	r1, r3 := byTier[TierReserved1y], byTier[TierReserved3y]
	if !r1.Derived || r1.RateMicros != 7_800_000 || !r3.Derived || r3.RateMicros != 5_400_000 {
		t.Errorf("derived reserved: 1y %+v, 3y %+v; want 7.80 and 5.40 (35%% and 55%% off)", r1.Offer, r3.Offer)
	}
	// The default one-year discount lies in the seed's 30–50%; the admin can
	// set either end and the estimate follows.
	for _, bps := range []int64{3000, 5000} {
		d := Derive(offers, map[string]int64{TierReserved1y: bps})
		for _, o := range d {
			if o.Tier == TierReserved1y {
				want := 12_000_000 * (10000 - bps) / 10000
				if o.PriceMicros != want || !strings.Contains(o.Note, "estimate") {
					t.Errorf("discount %d bps: %d, want %d (%q)", bps, o.PriceMicros, want, o.Note)
				}
			}
		}
	}
	if saving := 10000 - byTier[TierReserved1y].RateMicros*10000/byTier[TierOnDemand].RateMicros; saving < 3000 || saving > 5000 {
		t.Errorf("default reserved-1y saving %d bps is outside the seed's 30–50%%", saving)
	}
	// Sorted by cost.
	for i := 1; i < len(cmp); i++ {
		if cmp[i].Cost < cmp[i-1].Cost {
			t.Errorf("not sorted by cost: %d before %d", cmp[i-1].Cost, cmp[i].Cost)
		}
	}
}

func TestCurrencyConversion(t *testing.T) {
	offers := []Offer{
		{Provider: "A", Name: "x", GPUModel: "A100-80GB", Tier: TierOnDemand, Currency: "CNY", PriceMicros: 12_000_000},
		{Provider: "B", Name: "y", GPUModel: "A100", Tier: TierSpot, Currency: "EUR", PriceMicros: 1_000_000},
		{Provider: "C", Name: "z", GPUModel: "H100-80GB", Tier: TierOnDemand, Currency: "usd", PriceMicros: 2_000_000},
	}
	priced, missing := PriceOffers(offers, Settings{Currency: "USD", FX: Conversions("USD", []FXRate{{From: "CNY", To: "USD", Micros: 140_000}}, nil)})
	if missing["EUR"] != 1 || len(priced) != 2 {
		t.Fatalf("priced %d, missing %v", len(priced), missing)
	}
	if priced[0].RateMicros != 1_680_000 || !priced[0].Converted() {
		t.Errorf("12 CNY at 0.14 = %d, want 1.68 USD", priced[0].RateMicros)
	}
	if priced[1].RateMicros != 2_000_000 || priced[1].Converted() {
		t.Errorf("a USD price is not converted: %+v", priced[1])
	}
}

func TestFamily(t *testing.T) {
	for in, want := range map[string]string{
		"NVIDIA H100 80GB HBM3": "H100", "H100-80GB": "H100", "H100-NVL": "H100", "NVIDIA A100-SXM4-80GB": "A100",
		"A100-80GB-PCIe": "A100", "A100": "A100", "L40S": "L40S", "A10G": "A10G", "A10": "A10", "Tesla T4": "T4",
		"Tesla V100-SXM2-16GB": "V100", "NVIDIA GeForce RTX 4090": "RTX 4090", "H200": "H200", "NVIDIA H200 141GB HBM3e": "H200",
	} {
		if got := Family(in); got != want {
			t.Errorf("Family(%q) = %q, want %q", in, got, want)
		}
	}
	if SameFamily("A10", "A10G") || SameFamily("", "") {
		t.Error("A10 and A10G are different GPUs; empty names match nothing")
	}
}

// handTCO is the hand-computed case: 8 GPUs, 200 000, 5 years, 20 000
// residual, 700/100/2000 W, PUE 1.5, 0.10 per kWh, 100 per kW-month, 10%
// maintenance, 10 000 staff, 50% utilisation.
//
//	energy  (8·(700·.5+100·.5)+2000)/1000 · 8760 · 1.5 = 68 328 kWh → 6 832.80
//	colo    100 · (8·700+2000)·1.5/1000 · 12 = 100 · 11.4 · 12 = 13 680
//	annual  36 000 + 6 832.80 + 13 680 + 20 000 + 10 000 = 86 512.80
//	per GPU-hour at 50%  86 512.80 / (8 · 8760 · 0.5) = 2.468973
const handTCO = "gpu_model=H100&gpus_per_server=8&server_price=200000&depreciation_years=5&residual_value=20000" +
	"&gpu_active_watts=700&gpu_idle_watts=100&overhead_watts=2000&pue=1.5&electricity_per_kwh=0.10&colo_per_kw_month=100" +
	"&rack_per_month=0&maintenance_rate=0.1&staff_per_year=10000&utilization=0.5&target_utilization=70%25"

func mustTCO(t *testing.T, q string, offers []PricedOffer) *TCOResult {
	t.Helper()
	v, err := url.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	in, errs := ParseTCO(v, DefaultTCO("H100", 8, nil))
	if errs != nil {
		t.Fatalf("parse: %v", errs)
	}
	return TCO(in, offers)
}

func usdOffer(provider string, micros int64, tier string) PricedOffer {
	return PricedOffer{Offer: Offer{Provider: provider, Name: provider + " box", GPUModel: "H100-80GB", Tier: tier, Currency: "USD", PriceMicros: micros}, RateMicros: micros}
}

func TestTCOHandComputed(t *testing.T) {
	offers := []PricedOffer{usdOffer("Four", 4_000_000, TierOnDemand), usdOffer("Two", 2_000_000, TierOnDemand),
		usdOffer("One", 1_000_000, TierOnDemand), usdOffer("Other", 500_000, TierOnDemand)}
	offers[3].GPUModel = "A100-80GB" // another family: ignored
	r := mustTCO(t, handTCO, offers)
	a := r.Annual
	checks := []struct {
		name      string
		got, want int64
	}{
		{"depreciation", a.DepreciationMicros, 36_000_000_000},
		{"energy", a.EnergyMicros, 6_832_800_000},
		{"colocation", a.ColocationMicros, 13_680_000_000},
		{"maintenance", a.MaintenanceMicros, 20_000_000_000},
		{"staff", a.StaffMicros, 10_000_000_000},
		{"annual", a.TotalMicros, 86_512_800_000},
		{"owned per GPU-hour", a.OwnedPerGPUHourMicros, 2_468_973},
		{"running per month", r.RunningPerMonth, 4_209_400_000},
		{"suggested at 70%", r.SuggestedRateMicros, 1_789_266},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.name, c.got, c.want)
		}
	}
	if a.EnergyKWh != 68328 || r.PeakKW != 11.4 {
		t.Errorf("energy %v kWh, peak %v kW", a.EnergyKWh, r.PeakKW)
	}
	// The table at 25/50/75/100%: energy grows with use, the cost per used hour falls.
	wantTable := []int64{4_847_945, 2_468_973, 1_675_982, 1_279_486}
	for i, row := range r.Table {
		if row.OwnedPerGPUHourMicros != wantTable[i] {
			t.Errorf("table row %v: %d, want %d", row.Utilization, row.OwnedPerGPUHourMicros, wantTable[i])
		}
	}
	if r.Table[3].TotalMicros != 89_666_400_000 || r.Table[0].EnergyKWh != 52560 {
		t.Errorf("100%%: annual %d; 25%%: %v kWh", r.Table[3].TotalMicros, r.Table[0].EnergyKWh)
	}
	// Break-even utilisation = annual / (8 · 8760 · rate); months = price / (rent − running) a month.
	if len(r.Offers) != 3 {
		t.Fatalf("offers: %d, want the 3 H100 ones", len(r.Offers))
	}
	want := []struct {
		provider  string
		be        float64
		reachable bool
		months    float64
		pays      bool
	}{{"One", 1.2345, false, 0, false}, {"Two", 0.6172, true, 122.7, true}, {"Four", 0.3086, true, 26.8, true}}
	for i, w := range want {
		o := r.Offers[i]
		if o.Provider != w.provider || o.BreakEvenUtilization != w.be || o.Reachable != w.reachable || o.BreakEvenMonths != w.months || o.PaysBack != w.pays {
			t.Errorf("offer %d: %s be %v (%v) months %v (%v); want %+v", i, o.Provider, o.BreakEvenUtilization, o.Reachable, o.BreakEvenMonths, o.PaysBack, w)
		}
	}
	// The chart: owning and three offers over the 5-year horizon, month by month.
	c := r.Chart
	if len(c.Series) != 4 || !c.Series[0].Own || len(c.Months) != 61 || c.Months[60] != 60 {
		t.Fatalf("chart: %d series, %d points", len(c.Series), len(c.Months))
	}
	if c.Series[0].Points[0] != 200_000_000_000 || c.Series[0].Points[12] != 200_000_000_000+12*4_209_400_000 {
		t.Errorf("owning line: %d at 0, %d at 12", c.Series[0].Points[0], c.Series[0].Points[12])
	}
	// Renting at Four: 8 · 730 · 0.5 · 4 = 11 680 a month.
	if p := c.Series[3].Points[12]; p != 12*11_680_000_000 {
		t.Errorf("renting at 4/h after a year: %d", p)
	}
}

func TestTCORackAndChartPrefersListedOffers(t *testing.T) {
	offers := []PricedOffer{usdOffer("A", 3_000_000, TierOnDemand), usdOffer("B", 900_000, TierSpot), usdOffer("C", 2_500_000, TierOnDemand),
		usdOffer("D", 2_800_000, TierOnDemand), usdOffer("E", 1_000_000, TierReserved3y)}
	offers[1].Derived, offers[4].Derived = true, true
	base := mustTCO(t, handTCO, offers)
	withRack := mustTCO(t, strings.Replace(handTCO, "rack_per_month=0", "rack_per_month=500", 1), offers)
	if d := withRack.Annual.TotalMicros - base.Annual.TotalMicros; d != 6_000_000_000 {
		t.Errorf("a 500/month rack adds %d a year, want 6000", d)
	}
	var labels []string
	for _, s := range base.Chart.Series[1:] {
		labels = append(labels, s.Label)
	}
	if strings.Join(labels, "|") != "C C box (on-demand)|D D box (on-demand)|A A box (on-demand)" {
		t.Errorf("chart offers %q: want the three cheapest listed, not the estimates", labels)
	}
	// Cheapest first in the break-even table, estimates included.
	if base.Offers[0].Provider != "B" {
		t.Errorf("first offer %s", base.Offers[0].Provider)
	}
}

func TestTCOFieldErrors(t *testing.T) {
	for _, c := range []struct{ query, field string }{
		{"utilization=0", "utilization"},
		{"utilization=0%25", "utilization"},
		{"utilization=1.2", "utilization"},
		{"utilization=-0.5", "utilization"},
		{"pue=0.9", "pue"},
		{"depreciation_years=0", "depreciation_years"},
		{"residual_value=300000&server_price=200000", "residual_value"},
		{"gpu_idle_watts=800&gpu_active_watts=700", "gpu_idle_watts"},
		{"gpus_per_server=0", "gpus_per_server"},
		{"gpus_per_server=2.5", "gpus_per_server"},
		{"server_price=1e12", "server_price"},
		{"electricity_per_kwh=NaN", "electricity_per_kwh"},
		{"maintenance_rate=150%25", "maintenance_rate"},
		{"staff_per_year=-1", "staff_per_year"},
		{"horizon_years=31", "horizon_years"},
		{"gpu_model=" + strings.Repeat("x", 101), "gpu_model"},
	} {
		v, _ := url.ParseQuery(c.query)
		if _, errs := ParseTCO(v, DefaultTCO("H100", 8, nil)); errs[c.field] == "" {
			t.Errorf("%s: errors %v, want one on %s", c.query, errs, c.field)
		}
	}
	// A fraction field given a percentage without its sign says how it is
	// read and both ways to write it (it said "at most 100%" of 50).
	for q, want := range map[string]string{
		"utilization=50":       "50 would be 5000%: write a fraction (0.5) or a percentage (50%)",
		"maintenance_rate=8":   "8 would be 800%: write a fraction (0.08) or a percentage (8%)",
		"utilization=100":      "100 would be 10000%: write a fraction (1) or a percentage (100%)",
		"utilization=150":      "must be more than 0 and at most 100%",
		"maintenance_rate=1.5": "1.5 would be 150%: write a fraction (0.015) or a percentage (1.5%)",
		"maintenance_rate=101": "must be between 0% and 100%",
	} {
		v, _ := url.ParseQuery(q)
		_, errs := ParseTCO(v, DefaultTCO("H100", 8, nil))
		field := strings.SplitN(q, "=", 2)[0]
		if errs[field] != want {
			t.Errorf("%s: %q\nwant %q", q, errs[field], want)
		}
	}
	// Percentages are accepted for fractions.
	v, _ := url.ParseQuery("utilization=45%25&maintenance_rate=8%25")
	in, errs := ParseTCO(v, DefaultTCO("H100", 8, nil))
	if errs != nil || FormatNumber(in.Utilization, 6) != "0.45" || FormatNumber(in.MaintenanceRate, 6) != "0.08" {
		t.Fatalf("percent input: %v %v", in.Utilization, errs)
	}
	// The horizon follows the depreciation period unless given.
	v, _ = url.ParseQuery("depreciation_years=4")
	if in, _ := ParseTCO(v, DefaultTCO("H100", 8, nil)); FormatNumber(in.HorizonYears, 2) != "4" {
		t.Errorf("horizon %v", in.HorizonYears)
	}
}

func TestDefaultTCOIsValid(t *testing.T) {
	for _, m := range []string{h100, "A100-80GB", "L40S", "Some GPU", ""} {
		d := DefaultTCO(m, 8, nil)
		if m == "" {
			d.GPUModel = "x"
		}
		if _, errs := ParseTCO(d.Values(), d); errs != nil {
			t.Errorf("%s: defaults do not validate: %v", m, errs)
		}
	}
	if d := DefaultTCO(h100, 8, nil); FormatNumber(d.ServerPrice, 2) != "280000" || FormatNumber(d.GPUActiveWatts, 0) != "700" {
		t.Errorf("8 × H100 defaults: %v %v", d.ServerPrice, d.GPUActiveWatts)
	}
	// Converted at 7.2 CNY per USD.
	if d := DefaultTCO(h100, 8, rat("7.2")); FormatNumber(d.ServerPrice, 2) != "2016000" {
		t.Errorf("converted price %v", d.ServerPrice)
	}
}

// TestFormatExact: small sums keep the decimals that tell them apart; the
// rest print with two at least.
func TestFormatExact(t *testing.T) {
	for micros, want := range map[int64]string{
		800: "0.0008", 1_334: "0.001334", 12_500_000: "12.50", 3_000_000: "3.00", 1_234_567: "1.234567", 0: "0.00", -50_000: "-0.05",
	} {
		if got := FormatExact(micros); got != want {
			t.Errorf("FormatExact(%d) = %q, want %q", micros, got, want)
		}
	}
}
