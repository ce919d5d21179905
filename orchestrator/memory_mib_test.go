package orchestrator

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"testing"
	"time"

	"workbench/models"
	"workbench/models/pricing"
)

// For a range of MiB sizes (every MiB up to 4 GiB, then a sample up to
// 4 TiB) the ledger's charge for memory and the calculator's estimate agree
// to the micro-unit, and both equal rate × MiB × s / (1024 × 3600) rounded
// half away from zero, computed here with exact fractions. The calculator
// reads memory_gib as decimal GiB text and memory_mib as whole MiB.
func TestCalculatorAndLedgerAgreeOnEveryMiB(t *testing.T) {
	start := time.Date(2099, 5, 4, 10, 0, 0, 0, time.UTC)
	var sizes []int64
	// Under -short (make test-short) every 7th MiB below 4 GiB, at a
	// rotating offset; make test walks every one.
	step := int64(1)
	if testing.Short() {
		step = 7
	}
	for m := int64(64); m <= 4096; m += step {
		sizes = append(sizes, m)
	}
	for m := int64(4097); m <= 4096*1024; m = m*13/12 + 1 {
		sizes = append(sizes, m)
	}
	for _, rate := range []int64{5_000, 33_333, 1_000_003} {
		scheds := map[string]pricing.Schedule{
			pricing.ScheduleKey(pricing.CPU, ""):    {{Micros: 20_000}},
			pricing.ScheduleKey(pricing.Memory, ""): {{Micros: rate}},
		}
		for _, secs := range []int64{60, 3600, 5400} {
			end := start.Add(time.Duration(secs) * time.Second)
			for i, mib := range sizes {
				fl := &models.Flavor{CPUMilli: 1000, MemoryMiB: mib}
				lines, err := pricing.PriceShape(FlavorShape(fl), start, end, scheds)
				if err != nil {
					t.Fatal(err)
				}
				var ledger int64
				for _, l := range lines {
					if l.Resource == pricing.Memory {
						ledger += l.Amount
					}
				}
				// Exact: rate × MiB × secs / (1024 × 3600), per clock-hour line.
				var want int64
				for _, l := range lines {
					if l.Resource == pricing.Memory {
						want += roundHalfUp(new(big.Rat).SetFrac(big.NewInt(rate*mib*l.Seconds), big.NewInt(1024*3600)))
					}
				}
				if ledger != want {
					t.Fatalf("%d MiB, %d s at %d: ledger %d, exact %d", mib, secs, rate, ledger, want)
				}
				if i%7 != 0 && mib != 1536 {
					continue
				}
				gib := models.FormatMemoryGiB(mib)
				for _, v := range []url.Values{{"memory_gib": {gib}}, {"memory_mib": {fmt.Sprint(mib)}}} {
					v.Set("cpu_cores", "1")
					v.Set("duration", "total")
					v.Set("total_hours", pricing.FormatNumber(big.NewRat(secs, 3600), 6))
					in, errs := pricing.ParseEstimate(v, pricing.DefaultEstimate())
					if len(errs) > 0 {
						t.Fatalf("%v: %v", v, errs)
					}
					if in.Shape.MemoryMiB != mib {
						t.Fatalf("%v read as %d MiB, want %d", v, in.Shape.MemoryMiB, mib)
					}
					if secs != 3600 {
						continue
					}
					res, errs := pricing.Estimate(in, pricing.Prices{Schedules: scheds}, start)
					if len(errs) > 0 {
						t.Fatalf("%v: %v", v, errs)
					}
					var est int64 = -1
					for _, rc := range res.Resources {
						if rc.Resource == pricing.Memory {
							est = rc.PerHour
						}
					}
					if est != ledger {
						t.Fatalf("%d MiB at %d: calculator %d, ledger %d", mib, rate, est, ledger)
					}
				}
			}
		}
	}
	// Finer than a MiB is refused, not rounded.
	if _, errs := pricing.ParseEstimate(url.Values{"memory_gib": {"1.0001"}, "cpu_cores": {"1"}}, pricing.DefaultEstimate()); errs["memory_gib"] == "" {
		t.Fatal("memory_gib 1.0001 (not a whole MiB) accepted")
	}
}

func roundHalfUp(r *big.Rat) int64 {
	n := new(big.Int).Mul(r.Num(), big.NewInt(2))
	n.Add(n, r.Denom())
	d := new(big.Int).Mul(r.Denom(), big.NewInt(2))
	return new(big.Int).Quo(n, d).Int64()
}

// Flavors store integer MiB: a size typed in GiB with decimals comes back
// exactly, the JSON keeps memory_gib (as exact GiB) and adds memory_mib, and
// a size finer than a MiB is refused.
func TestFlavorMemoryMiBRoundTrip(t *testing.T) {
	f := newBillFixture(t)
	for i, c := range []struct {
		gib string
		mib int64
	}{{"16", 16384}, {"0.5", 512}, {"1.5", 1536}, {"0.0625", 64}, {"2.0009765625", 2049}, {"4096", 4194304}} {
		mib, err := models.ParseMemoryGiB(c.gib)
		if err != nil || mib != c.mib {
			t.Fatalf("%s GiB parsed as %d MiB (%v), want %d", c.gib, mib, err, c.mib)
		}
		fl := &models.Flavor{Name: fmt.Sprintf("m%d", i), CPUMilli: 1000, MemoryMiB: mib, Enabled: true}
		if err := f.store.CreateFlavor(f.ctx, fl); err != nil {
			t.Fatal(err)
		}
		got, err := f.store.FlavorByID(f.ctx, fl.ID)
		if err != nil || got.MemoryMiB != c.mib || models.FormatMemoryGiB(got.MemoryMiB) != c.gib {
			t.Fatalf("%s GiB stored, %d MiB (%q) read back (%v)", c.gib, got.MemoryMiB, models.FormatMemoryGiB(got.MemoryMiB), err)
		}
		out, _ := json.Marshal(got)
		var back struct {
			GiB json.Number `json:"memory_gib"`
			MiB int64       `json:"memory_mib"`
		}
		if err := json.Unmarshal(out, &back); err != nil || back.GiB.String() != c.gib || back.MiB != c.mib {
			t.Fatalf("JSON %s: memory_gib %q memory_mib %d (%v)", out, back.GiB, back.MiB, err)
		}
	}
	for _, bad := range []string{"1.0001", "1e3", "-1", "two", "", "1/2"} {
		if mib, err := models.ParseMemoryGiB(bad); err == nil {
			t.Errorf("memory_gib %q accepted as %d MiB", bad, mib)
		}
	}
	if err := f.store.CreateFlavor(f.ctx, &models.Flavor{Name: "tiny", CPUMilli: 1000, MemoryMiB: 10, Enabled: true}); err == nil {
		t.Error("a 10 MiB flavor was accepted")
	}
}
