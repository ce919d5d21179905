package pricing

import (
	"math"
	"net/url"
	"testing"
	"time"
)

// FuzzParseCalculatorInput feeds arbitrary query strings (what a shared
// link or an API body turns into) to both parsers. Whatever the input, the
// parsers never panic; what they accept computes without a panic, with no
// NaN or Inf and no negative money, and encodes back to the same input.
// The seed corpus is in testdata/fuzz/FuzzParseCalculatorInput.
func FuzzParseCalculatorInput(f *testing.F) {
	f.Add("flavor=custom&gpu_model=NVIDIA+H100+80GB+HBM3&gpu_count=8&cpu_cores=64&memory_gib=512&hours_per_day=8&days=22")
	f.Add("duration=total&total_hours=0.01&cpu_cores=2&memory_gib=8&storage_gib=50")
	f.Add(handTCO)
	f.Add("utilization=0&pue=NaN&server_price=-1&gpus_per_server=1e3")
	f.Add("utilization=45%25&maintenance_rate=8%25&horizon_years=30&depreciation_years=0.1")
	prices := testPrices(60 * time.Second)
	offers := []PricedOffer{usdOffer("A", 3_000_000, TierOnDemand), usdOffer("B", 1, TierSpot), usdOffer("C", 999_999_999_999, TierOnDemand)}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		def := DefaultEstimate()
		def.Shape.GPUModel, def.Shape.GPUCount = h100, 1
		if in, errs := ParseEstimate(v, def); errs == nil {
			if in.RunSeconds() <= 0 || in.Runs() <= 0 {
				t.Fatalf("accepted an empty duration: %+v", in)
			}
			again, errs := ParseEstimate(in.Values(), def)
			if errs != nil || again.Values().Encode() != in.Values().Encode() {
				t.Fatalf("round trip: %v\n%s\n%s", errs, in.Values().Encode(), again.Values().Encode())
			}
			if res, errs := Estimate(in, prices, t0); errs == nil {
				for _, m := range []int64{res.PerHour, res.PerDay, res.PerMonth, res.Total, res.ComputeTotal, res.StorageTotal} {
					if m < 0 {
						t.Fatalf("negative money %d for %s", m, raw)
					}
				}
				if res.BilledRunSeconds < res.RunSeconds || res.BilledRunSeconds < 60 {
					t.Fatalf("billed %d s for a %d s run", res.BilledRunSeconds, res.RunSeconds)
				}
			} else if len(errs) == 0 {
				t.Fatal("empty errors")
			}
		}
		if in, errs := ParseTCO(v, DefaultTCO("H100", 8, nil)); errs == nil {
			again, errs := ParseTCO(in.Values(), DefaultTCO("H100", 8, nil))
			if errs != nil || again.Values().Encode() != in.Values().Encode() {
				t.Fatalf("TCO round trip: %v\n%s\n%s", errs, in.Values().Encode(), again.Values().Encode())
			}
			r := TCO(in, offers)
			floats := []float64{r.PeakKW, r.Annual.EnergyKWh, r.Annual.Utilization, r.Target.Utilization}
			for _, o := range r.Offers {
				floats = append(floats, o.BreakEvenUtilization, o.BreakEvenMonths)
			}
			for _, x := range floats {
				if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
					t.Fatalf("bad figure %v for %s", x, raw)
				}
			}
			for _, m := range []int64{r.Annual.TotalMicros, r.Annual.OwnedPerGPUHourMicros, r.SuggestedRateMicros, r.RunningPerMonth} {
				if m < 0 {
					t.Fatalf("negative money %d for %s", m, raw)
				}
			}
			if len(r.Chart.Months) < 2 || len(r.Chart.Months) > maxChartPoints || len(r.Chart.Series) != 1+min(chartSeriesOffers, len(r.Offers)) {
				t.Fatalf("chart: %d points, %d series", len(r.Chart.Months), len(r.Chart.Series))
			}
			for _, s := range r.Chart.Series {
				if len(s.Points) != len(r.Chart.Months) {
					t.Fatalf("series %s has %d points for %d months", s.Label, len(s.Points), len(r.Chart.Months))
				}
			}
		}
	})
}
