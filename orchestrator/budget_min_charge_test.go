package orchestrator

import (
	"testing"
	"time"

	"workbench/models"
	"workbench/models/pricing"
)

// The budget timer counts the minimum charge: a young run's charge up to
// its minimum is owed whatever happens and does not grow until then, so
// the instant the budget runs out comes from what is left after it, and
// the young run adds to the spending only once its minimum is used up.
func TestSecondsUntilSpentCountsTheMinimumCharge(t *testing.T) {
	now := time.Date(2099, 5, 4, 10, 0, 30, 0, time.UTC)
	perSec := int64(3600) // 1 micro-unit a second
	cases := []struct {
		name string
		left int64
		runs []liveRun
		want int64
	}{
		// No minimum pending: left / rate, as before.
		{"old run", 30, []liveRun{{perSec, now.Add(-time.Minute)}}, 30},
		// 50 s of the minimum ahead are owed whatever happens: stopping
		// before they are used saves nothing, so the run keeps them.
		{"budget inside the minimum", 30, []liveRun{{perSec, now.Add(50 * time.Second)}}, 50},
		// An old run at 1/s besides: it must stop now, the budget is
		// spent by what the young run owes.
		{"owed minimum spends the budget", 30, []liveRun{{perSec, now.Add(-time.Hour)}, {perSec, now.Add(50 * time.Second)}}, 0},
		// 100 left: 50 owed, the run spends nothing for 50 s, then 1/s.
		{"budget past the minimum", 100, []liveRun{{perSec, now.Add(50 * time.Second)}}, 100},
		// An old run at 1/s and a young one at 2/s with 50 s of minimum
		// ahead: 120 − 100 owed = 20 s for the old run alone (old code:
		// 120 / 3 = 40 s, charging 140).
		{"two runs", 120, []liveRun{{perSec, now.Add(-time.Hour)}, {2 * perSec, now.Add(50 * time.Second)}}, 20},
		// 200 − 100 owed: 50 s at 1/s, then 50 left at 3/s → 16 s more.
		{"two runs past the minimum", 200, []liveRun{{perSec, now.Add(-time.Hour)}, {2 * perSec, now.Add(50 * time.Second)}}, 66},
		{"spent", 0, []liveRun{{perSec, now.Add(-time.Hour)}}, 0},
	}
	// owedAhead is what the runs' minimums still owe past at: the month's
	// usage (Billing.MonthUsage) counts it already, so the limit left that
	// secondsUntilSpent is given is c.left (what is left counting the runs
	// up to now only) less it.
	owedAhead := func(at time.Time, runs []liveRun) int64 {
		var owed int64
		for _, r := range runs {
			if d := r.minEnd.Sub(at); d > 0 {
				owed += r.perHour * int64(d/time.Second) / 3600
			}
		}
		return owed
	}
	for _, c := range cases {
		got, ok := secondsUntilSpent(c.left-owedAhead(now, c.runs), now, c.runs)
		if !ok || got != c.want {
			t.Errorf("%s: %d s (ok %v), want %d", c.name, got, ok, c.want)
		}
		// Check against the charge itself: stopping at the instant charges
		// at most the budget, or what is owed anyway if that is more.
		var charged, owed int64
		for _, r := range c.runs {
			end := now.Add(time.Duration(got) * time.Second)
			if r.minEnd.After(end) {
				end = r.minEnd
			}
			if d := end.Sub(now); d > 0 {
				charged += r.perHour * int64(d/time.Second) / 3600
			}
			if d := r.minEnd.Sub(now); d > 0 {
				owed += r.perHour * int64(d/time.Second) / 3600
			}
		}
		if charged > max(c.left, owed) {
			t.Errorf("%s: stopping at %d s charges %d past now, over the %d left", c.name, got, charged, c.left)
		}
	}
	// Now inside a second (a timer runs at any instant): with the budget
	// spent by the minimum, the instant lies inside the minimum's last
	// second, so the stop lands before a 61st second begins (it was
	// rounded up past minEnd, and such a run was charged 61 s).
	frac := now.Add(400 * time.Millisecond)
	young := []liveRun{{perSec, now.Add(50 * time.Second)}}
	if got, ok := secondsUntilSpent(0-owedAhead(frac, young), frac, young); !ok || got != 49 {
		t.Errorf("spent budget, now inside a second: %d s (ok %v), want 49 (inside the minimum's last second)", got, ok)
	}
	if _, ok := secondsUntilSpent(100, now, nil); ok {
		t.Error("nothing running, yet an instant")
	}
}

// MinimumCharge prices a flavor's minimum charge at the rates in force, the
// figure the launch check compares with what is left of the budget.
func TestMinimumChargeOfAFlavor(t *testing.T) {
	f := newBillFixture(t)
	b := NewBilling(f.store, time.Minute)
	fl := &models.Flavor{CPUMilli: 2000, MemoryMiB: 1536}
	got, secs, err := b.MinimumCharge(f.ctx, FlavorShape(fl))
	if err != nil {
		t.Fatal(err)
	}
	scheds, _ := f.store.Schedules(f.ctx)
	start := time.Now().UTC().Truncate(time.Second)
	lines, err := pricing.PriceShape(FlavorShape(fl), start, start.Add(time.Minute), scheds)
	if err != nil {
		t.Fatal(err)
	}
	if want := pricing.SumResources(lines); got != want || secs != 60 || got <= 0 {
		t.Fatalf("minimum charge %d for %d s, want %d for 60 s", got, secs, want)
	}
	if none, _, _ := NewBilling(f.store, 0).MinimumCharge(f.ctx, FlavorShape(fl)); none != 0 {
		t.Fatalf("no minimum, yet a minimum charge of %d", none)
	}
}

// The budget's timer fires just after the last second that fits has
// begun, on each run's own second grid (its start plus whole seconds), so
// a stop has that whole second before one more is charged.
func TestLastStepIsWhereTheLastFittingSecondBegins(t *testing.T) {
	start := time.Date(2026, 3, 1, 10, 0, 0, 422_000_000, time.UTC)
	one := []models.UsageInterval{{StartedAt: start}}
	for _, c := range []struct{ at, want time.Duration }{
		{7*time.Second + 900*time.Millisecond, 7 * time.Second}, // inside the 8th second: it began at +7 s
		{7*time.Second + time.Millisecond, 7 * time.Second},
		{8 * time.Second, 7 * time.Second}, // at the 8th second's end: it began at +7 s
		{300 * time.Millisecond, 0},
	} {
		if got := lastStep(start.Add(c.at), one); !got.Equal(start.Add(c.want)) {
			t.Errorf("lastStep(start+%s) = start+%s, want start+%s", c.at, got.Sub(start), c.want)
		}
	}
	// Two runs: the latest step of either at or before at.
	two := []models.UsageInterval{{StartedAt: start}, {StartedAt: start.Add(-300 * time.Millisecond)}}
	at := start.Add(5*time.Second + 800*time.Millisecond)
	if got, want := lastStep(at, two), start.Add(5*time.Second+700*time.Millisecond); !got.Equal(want) {
		t.Errorf("two runs: lastStep = start+%s, want start+%s", got.Sub(start), want.Sub(start))
	}
	// Nothing running yet at at: at itself.
	if got := lastStep(start, []models.UsageInterval{{StartedAt: start.Add(time.Second)}}); !got.Equal(start) {
		t.Errorf("no run begun: lastStep = %s, want at", got)
	}
}
