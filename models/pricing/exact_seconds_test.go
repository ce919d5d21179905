package pricing

import (
	"math/rand"
	"testing"
	"time"
)

// Property (SPEC §6 rule 10): however a run is cut — at clock hours, at
// rate changes, and into any number of billing calls — its pieces add up to
// exactly ⌈end − start⌉ seconds (or the minimum charge), and each piece's
// amount is its rate × quantity × seconds. Start, end, rate changes and
// billing points carry random nanosecond fractions.
func TestSplitRunAddsUpToChargedSeconds(t *testing.T) {
	rng := rand.New(rand.NewSource(20261201))
	base := time.Date(2026, 11, 30, 21, 0, 0, 0, time.UTC)
	frac := func() time.Duration { return time.Duration(rng.Int63n(int64(time.Second))) }
	for i := 0; i < 5000; i++ {
		start := base.Add(time.Duration(rng.Int63n(int64(3*time.Hour))) + frac())
		var dur time.Duration
		switch rng.Intn(3) {
		case 0: // short runs, where a second is a large share
			dur = time.Duration(rng.Int63n(int64(90 * time.Second)))
		case 1:
			dur = time.Duration(rng.Int63n(int64(5 * time.Hour)))
		default: // a whole number of seconds, the fraction of the start kept
			dur = time.Duration(rng.Int63n(20000)) * time.Second
		}
		end := start.Add(dur)
		minimum := []time.Duration{0, 60 * time.Second, 10 * time.Second}[rng.Intn(3)]
		sched := Schedule{{Effective: base.Add(-time.Hour), Micros: 1 + rng.Int63n(5_000_000)}}
		for n := rng.Intn(5); n > 0; n-- {
			at := start.Add(time.Duration(rng.Int63n(int64(dur)+1)) - time.Minute)
			if rng.Intn(2) == 0 {
				at = at.Truncate(time.Second) // as the store keeps them
			}
			sched = append(sched, Rate{Effective: at, Micros: rng.Int63n(9_000_000)})
		}
		qty := []int64{1000, 2000, 8000, 2010, 500, 16000}[rng.Intn(6)]
		want := ChargedSeconds(start, end, minimum)
		if wantRaw := int64((end.Sub(start) + time.Second - 1) / time.Second); want != max(wantRaw, int64(minimum/time.Second)) {
			t.Fatalf("ChargedSeconds(%v) = %d, want ⌈%v⌉ or the minimum", end.Sub(start), want, end.Sub(start))
		}
		_, billedEnd := BilledSpan(start, end, minimum)
		// Bill in several calls, cut at random instants (as the ledger cuts
		// an open run at the hours its heartbeat has passed).
		cuts := []time.Time{start}
		for n := rng.Intn(4); n > 0; n-- {
			c := start.Add(time.Duration(rng.Int63n(int64(billedEnd.Sub(start)) + 1)))
			if rng.Intn(2) == 0 {
				c = c.Truncate(time.Hour)
			}
			if c.After(cuts[len(cuts)-1]) {
				cuts = append(cuts, c)
			}
		}
		cuts = append(cuts, billedEnd)
		var secs, amount, sumRated int64
		prevEnd := start
		for k := 0; k+1 < len(cuts); k++ {
			lines, err := SplitRun(start, cuts[k], cuts[k+1], qty, sched, false)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range lines {
				if l.Seconds <= 0 || l.End.Sub(l.Start) != time.Duration(l.Seconds)*time.Second {
					t.Fatalf("run %d: line %v–%v has %d seconds", i, l.Start, l.End, l.Seconds)
				}
				if !l.Start.Equal(prevEnd) {
					t.Fatalf("run %d: line starts at %v, the previous ended at %v (gap or overlap)", i, l.Start, prevEnd)
				}
				if !l.Start.Truncate(time.Hour).Equal(l.End.Add(-time.Second).Truncate(time.Hour)) {
					t.Fatalf("run %d: line %v–%v spans an hour boundary", i, l.Start, l.End)
				}
				prevEnd = l.End
				secs += l.Seconds
				amount += l.Amount
				sumRated += Amount(l.RateMicros, qty, l.Seconds, false)
				if r, _ := sched.At(l.Start); r.Micros != l.RateMicros && l.Seconds > 1 {
					// the straddling second goes with the part before the
					// cut; later seconds of a line are at its rate
					if r2, _ := sched.At(l.Start.Add(time.Second)); r2.Micros != l.RateMicros {
						t.Fatalf("run %d: line at %v priced %d, rate in force %d", i, l.Start, l.RateMicros, r.Micros)
					}
				}
			}
		}
		if secs != want {
			t.Fatalf("run %d: %v → %v (min %v) cut at %v: lines add to %d s, want %d", i, start, end, minimum, cuts, secs, want)
		}
		if amount != sumRated {
			t.Fatalf("run %d: amount %d is not Σ rate·seconds %d", i, amount, sumRated)
		}
	}
}

// The audit's examples: 91.603 s is billed 92 s, 4.789 s (no minimum) 5 s.
func TestChargedSecondsRoundsTheSpanOnce(t *testing.T) {
	start := time.Date(2026, 11, 30, 10, 0, 0, 700_000_000, time.UTC)
	for _, c := range []struct {
		dur  time.Duration
		want int64
	}{{91603 * time.Millisecond, 92}, {4789 * time.Millisecond, 5}, {time.Second, 1}, {0, 0}, {time.Nanosecond, 1}} {
		if got := ChargedSeconds(start, start.Add(c.dur), 0); got != c.want {
			t.Errorf("%v from %v: %d s, want %d", c.dur, start, got, c.want)
		}
		lines, err := Split(start, start.Add(time.Duration(c.want)*time.Second), 1000, Schedule{{Micros: 3600}}, false)
		if err != nil {
			t.Fatal(err)
		}
		if s := Sum(lines); s != c.want {
			t.Errorf("%v: priced %d micro-units at 1 per second, want %d", c.dur, s, c.want)
		}
	}
}
