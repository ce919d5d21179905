package orchestrator

import (
	"math/rand"
	"sort"
	"testing"
	"time"

	"workbench/models/pricing"
)

// Property over the real biller and store: runs with random start and end
// instants (nanosecond fractions), rate changes at random seconds, billed
// hour by hour as time passes and closed when they end, are charged exactly
// ⌈end − start⌉ seconds per resource (or the minimum charge), and every
// amount is rate × quantity × seconds. The audit found +1 s on 40% of runs
// when the start was truncated to its second before rounding up.
func TestLedgerSecondsAreExactlyTheRoundedSpan(t *testing.T) {
	f := newBillFixture(t)
	rng := rand.New(rand.NewSource(42))
	b := NewBilling(f.store, 60*time.Second)
	dayStart := at("08:00:00")
	frac := func() time.Duration { return time.Duration(rng.Int63n(int64(time.Second))) }
	for i := 0; i < 6; i++ {
		res := []string{pricing.GPU, pricing.CPU, pricing.Memory}[rng.Intn(3)]
		model := ""
		if res == pricing.GPU {
			model = billGPU
		}
		f.rate(res, model, 1+rng.Int63n(6_000_000), dayStart.Add(time.Duration(rng.Int63n(int64(5*time.Hour)))+frac()))
	}
	type run struct {
		wb         string
		start, end time.Time
		closed     bool
	}
	var runs []*run
	for i := 0; i < 30; i++ {
		start := dayStart.Add(time.Duration(rng.Int63n(int64(3*time.Hour))) + frac())
		dur := time.Duration(rng.Int63n(int64(150 * time.Second)))
		if i%3 == 0 {
			dur = time.Duration(rng.Int63n(int64(2 * time.Hour)))
		}
		runs = append(runs, &run{start: start, end: start.Add(dur)})
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].start.Before(runs[j].start) })
	// Walk the clock: open runs as they start, close them as they end,
	// and bill at random moments and just after every hour.
	var steps []time.Time
	for now := dayStart; now.Before(at("14:00:00")); now = now.Add(time.Duration(rng.Int63n(int64(20*time.Minute))) + frac()) {
		steps = append(steps, now)
	}
	for h := dayStart; h.Before(at("14:00:00")); h = h.Add(time.Hour) {
		steps = append(steps, h.Add(time.Second))
	}
	sort.Slice(steps, func(i, j int) bool { return steps[i].Before(steps[j]) })
	for _, now := range steps {
		for _, r := range runs {
			if r.wb == "" && !r.start.After(now) {
				r.wb = f.open(r.start)
			}
			if r.wb != "" && !r.closed && !r.end.After(now) {
				f.close(r.wb, r.end)
				r.closed = true
			}
		}
		f.bill(b, now)
	}
	scheds, err := f.store.Schedules(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	lines := f.statement(billDay, billDay.AddDate(0, 0, 1))
	qty := map[string]int64{pricing.GPU: 2000, pricing.CPU: 4000, pricing.Memory: 16000}
	for _, r := range runs {
		want := pricing.ChargedSeconds(r.start, r.end, 60*time.Second)
		secs := map[string]int64{}
		for _, l := range lines {
			if l.WorkbenchID != r.wb {
				continue
			}
			secs[l.Resource] += l.Seconds
			if l.QuantityMilli != qty[l.Resource] || l.AmountMicros != pricing.Amount(l.RateMicros, l.QuantityMilli, l.Seconds, false) {
				t.Errorf("%s %s line %+v: amount is not rate × quantity × seconds", r.wb, l.Resource, l)
			}
			// A line's rate is the one in force where it starts (the
			// second that straddles a change goes with the earlier part).
			sched := scheds[pricing.ScheduleKey(l.Resource, l.GPUModel)]
			r1, _ := sched.At(l.PeriodStart)
			r2, _ := sched.At(l.PeriodStart.Add(-time.Second))
			if l.RateMicros != r1.Micros && l.RateMicros != r2.Micros {
				t.Errorf("%s %s line at %s priced %d; in force %d", r.wb, l.Resource, l.PeriodStart.Format(time.StampNano), l.RateMicros, r1.Micros)
			}
		}
		for _, res := range []string{pricing.GPU, pricing.CPU, pricing.Memory} {
			if secs[res] != want {
				t.Errorf("run %s %s → %s (%.3f s): %s lines add to %d s, want %d",
					r.wb, r.start.Format(time.StampNano), r.end.Format(time.StampNano), r.end.Sub(r.start).Seconds(), res, secs[res], want)
			}
		}
	}
}
