package orchestrator

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"workbench/models"
	"workbench/models/pricing"
)

// For every two-decimal core count a flavor may have (0.10 … 512.00), the
// calculator's estimate and the ledger's charge for an hour of CPU agree to
// the micro-unit: the API reads cpu_cores as decimal text into integer
// milli-cores, the interval carries them, and the calculator parses the
// same text the same way. With cores as a float, 2.01 cores billed 2009 m.
func TestCalculatorAndLedgerAgreeOnEveryCoreCount(t *testing.T) {
	start := time.Date(2099, 5, 4, 10, 0, 0, 0, time.UTC)
	// Under -short (make test-short) every 7th core count, a different
	// seventh for each rate, plus the sampled ones; make test walks all.
	step := 1
	if testing.Short() {
		step = 7
	}
	for ri, rate := range []int64{20_000, 33_333, 1_000_003} {
		scheds := map[string]pricing.Schedule{
			pricing.ScheduleKey(pricing.CPU, ""):    {{Micros: rate}},
			pricing.ScheduleKey(pricing.Memory, ""): {{Micros: 5_000}},
		}
		for c := 10; c <= 51200; c++ {
			if step > 1 && c%step != ri && c%97 != 0 && c != 201 {
				continue
			}
			cores := fmt.Sprintf("%d.%02d", c/100, c%100)
			// The API: a flavor created with {"cpu_cores": 2.01}.
			var body struct {
				CPU models.Millicores `json:"cpu_cores"`
			}
			if err := json.Unmarshal([]byte(`{"cpu_cores": `+cores+`}`), &body); err != nil {
				t.Fatalf("%s: %v", cores, err)
			}
			if int64(body.CPU) != int64(c)*10 {
				t.Fatalf("%s cores read as %d milli-cores", cores, body.CPU)
			}
			fl := &models.Flavor{CPUMilli: body.CPU, MemoryMiB: 1 * 1024}
			lines, err := pricing.PriceShape(FlavorShape(fl), start, start.Add(time.Hour), scheds)
			if err != nil {
				t.Fatal(err)
			}
			var ledger int64
			for _, l := range lines {
				if l.Resource == pricing.CPU {
					ledger += l.Amount
				}
			}
			in, errs := pricing.ParseEstimate(url.Values{"cpu_cores": {cores}, "memory_gib": {"1"}, "duration": {"total"}, "total_hours": {"1"}}, pricing.DefaultEstimate())
			if len(errs) > 0 {
				t.Fatalf("%s: %v", cores, errs)
			}
			if in.Shape.CPUMilli != int64(fl.CPUMilli) {
				t.Fatalf("%s cores: the calculator reads %d m, the API %d m", cores, in.Shape.CPUMilli, fl.CPUMilli)
			}
			// The whole estimate (hour, day, month) is slow: every core
			// count through the pricing it calls, a sample through all of it.
			if c%97 != 0 && c != 201 {
				calc, err := pricing.PriceShape(in.Shape, start, start.Add(time.Hour), scheds)
				if err != nil {
					t.Fatal(err)
				}
				var est int64
				for _, l := range calc {
					if l.Resource == pricing.CPU {
						est += l.Amount
					}
				}
				if est != ledger {
					t.Fatalf("%s cores at %d: calculator %d, ledger %d", cores, rate, est, ledger)
				}
				continue
			}
			res, errs := pricing.Estimate(in, pricing.Prices{Schedules: scheds}, start)
			if len(errs) > 0 {
				t.Fatalf("%s: %v", cores, errs)
			}
			var est int64
			for _, rc := range res.Resources {
				if rc.Resource == pricing.CPU {
					est = rc.PerHour
				}
			}
			if est != ledger || in.Shape.CPUMilli != int64(fl.CPUMilli) {
				t.Fatalf("%s cores at %d: calculator %d (%d m), ledger %d (%d m)", cores, rate, est, in.Shape.CPUMilli, ledger, fl.CPUMilli)
			}
		}
	}
}

// Flavors store integer milli-cores: what goes in comes back exactly, and
// the API refuses what it cannot represent.
func TestFlavorMillicoresRoundTrip(t *testing.T) {
	f := newBillFixture(t)
	for i, s := range []string{"2.01", "0.1", "0.125", "511.99", "3", "64.07"} {
		m, err := models.ParseMillicores(s)
		if err != nil {
			t.Fatal(err)
		}
		fl := &models.Flavor{Name: fmt.Sprintf("f%d", i), CPUMilli: m, MemoryMiB: 1 * 1024, Enabled: true}
		if err := f.store.CreateFlavor(f.ctx, fl); err != nil {
			t.Fatal(err)
		}
		got, err := f.store.FlavorByID(f.ctx, fl.ID)
		if err != nil || got.CPUMilli != m || got.CPUMilli.String() != s {
			t.Fatalf("%s cores stored, %v (%q) read back (%v)", s, got.CPUMilli, got.CPUMilli.String(), err)
		}
		out, _ := json.Marshal(got)
		if want := `"cpu_cores":` + s + `,`; !contains(string(out), want) {
			t.Fatalf("JSON %s lacks %s", out, want)
		}
	}
	for _, bad := range []string{"2.0001", "1e3", "-1", "two", "", "1.2.3"} {
		var body struct {
			CPU models.Millicores `json:"cpu_cores"`
		}
		if err := json.Unmarshal([]byte(`{"cpu_cores": "`+bad+`"}`), &body); err == nil {
			t.Errorf("cpu_cores %q accepted as %v", bad, body.CPU)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
