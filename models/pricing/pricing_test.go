package pricing

import (
	"errors"
	"math"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)

func at(h, m, s int) time.Time {
	return t0.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s)*time.Second)
}

func TestBilledSpan(t *testing.T) {
	cases := []struct {
		name       string
		start, end time.Time
		min        time.Duration
		want       time.Duration
	}{
		{"partial second rounds up", at(0, 0, 0), at(0, 5, 0).Add(300 * time.Millisecond), 60 * time.Second, 5*time.Minute + time.Second},
		{"start kept, the span rounded up once", at(0, 0, 0).Add(700 * time.Millisecond), at(0, 0, 90).Add(100 * time.Millisecond), 0, 90 * time.Second},
		{"minimum charge", at(0, 0, 0), at(0, 0, 10), 60 * time.Second, 60 * time.Second},
		{"zero minimum allowed", at(0, 0, 0), at(0, 0, 10), 0, 10 * time.Second},
		{"end before start is zero", at(0, 1, 0), at(0, 0, 0), 0, 0},
		{"exact seconds unchanged", at(0, 0, 0), at(2, 0, 0), 60 * time.Second, 2 * time.Hour},
	}
	for _, c := range cases {
		s, e := BilledSpan(c.start, c.end, c.min)
		if got := e.Sub(s); got != c.want || !s.Equal(c.start) {
			t.Errorf("%s: billed %v from %v, want %v", c.name, got, s, c.want)
		}
	}
}

func TestSplitAtHoursAndRateChanges(t *testing.T) {
	sched := Schedule{{Effective: t0.Add(-24 * time.Hour), Micros: 2_000_000}, {Effective: at(1, 30, 0), Micros: 3_000_000}}
	lines, err := Split(at(0, 45, 0), at(2, 15, 0), 2*MilliUnits, sched, false)
	if err != nil {
		t.Fatal(err)
	}
	// 10:45–11:00 @2, 11:00–11:30 @2, 11:30–12:00 @3, 12:00–12:15 @3 (2 GPUs)
	want := []struct {
		secs, rate, amount int64
	}{
		{900, 2_000_000, 1_000_000},  // 0.25 h × 2 GPUs × 2.00
		{1800, 2_000_000, 2_000_000}, // 0.5 h × 2 × 2.00
		{1800, 3_000_000, 3_000_000}, // 0.5 h × 2 × 3.00
		{900, 3_000_000, 1_500_000},  // 0.25 h × 2 × 3.00
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d: %+v", len(lines), len(want), lines)
	}
	for i, w := range want {
		l := lines[i]
		if l.Seconds != w.secs || l.RateMicros != w.rate || l.Amount != w.amount {
			t.Errorf("line %d: %+v, want %+v", i, l, w)
		}
		if l.Start.Truncate(time.Hour) != l.End.Add(-time.Nanosecond).Truncate(time.Hour) {
			t.Errorf("line %d crosses an hour: %v–%v", i, l.Start, l.End)
		}
	}
	if Sum(lines) != 7_500_000 {
		t.Fatalf("total %d", Sum(lines))
	}
}

func TestSplitRefusesUnpricedTime(t *testing.T) {
	sched := Schedule{{Effective: at(1, 0, 0), Micros: 1}}
	if _, err := Split(at(0, 0, 0), at(2, 0, 0), 1000, sched, false); err == nil {
		t.Fatal("usage before the first rate was priced")
	}
}

func TestAmountRounding(t *testing.T) {
	cases := []struct {
		rate, qty, secs int64
		month           bool
		want            int64
	}{
		{3_600_000, 1000, 1, false, 1000},       // 3.60/h for 1 s = 0.001
		{1_000_000, 1000, 1, false, 278},        // 1/3600 = 277.78 µ → 278
		{1_000_000, 500, 1, false, 139},         // half a core: 138.89 → 139
		{100_000_000, 1000, 3600, true, 136986}, // 100/GiB-month for 1 GiB-hour: 100/730 = 0.136986
		{0, 1000, 3600, false, 0},
	}
	for _, c := range cases {
		if got := Amount(c.rate, c.qty, c.secs, c.month); got != c.want {
			t.Errorf("Amount(%d,%d,%d,%v) = %d, want %d", c.rate, c.qty, c.secs, c.month, got, c.want)
		}
	}
}

func TestScheduleAt(t *testing.T) {
	s := Schedule{{Effective: at(2, 0, 0), Micros: 3}, {Effective: at(0, 0, 0), Micros: 1}, {Effective: at(1, 0, 0), Micros: 2}}
	for _, c := range []struct {
		t    time.Time
		want int64
		ok   bool
	}{{at(0, 0, 0), 1, true}, {at(1, 59, 59), 2, true}, {at(5, 0, 0), 3, true}, {t0.Add(-time.Second), 0, false}} {
		r, ok := s.At(c.t)
		if ok != c.ok || r.Micros != c.want {
			t.Errorf("At(%v) = %d %v", c.t, r.Micros, ok)
		}
	}
}

func TestFormat(t *testing.T) {
	for in, want := range map[int64]string{0: "0.00", 12_345_678: "12.35", 5_000: "0.01", 4_999: "0.00", -1_500_000: "-1.50"} {
		if got := Format(in); got != want {
			t.Errorf("Format(%d) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[int64]string{12_500: "0.0125", 2_000_000: "2.00", 2_500_000: "2.50"} {
		if got := FormatRate(in); got != want {
			t.Errorf("FormatRate(%d) = %q, want %q", in, got, want)
		}
	}
}

// TestHighestRateOnALargeFlavorPricesExactly: the highest rate an admin may
// set (a million per unit-hour, on memory) for an hour of an 8-GPU flavor's
// 512 GiB: the product of rate, quantity and seconds is beyond int64, the
// amount is not. It panicked the billing pass, and the portal crashed on
// every start while it finished the stop that hit it.
func TestHighestRateOnALargeFlavorPricesExactly(t *testing.T) {
	const million = 1_000_000 * 1_000_000 // micro-units per unit-hour
	scheds := map[string]Schedule{
		ScheduleKey(Memory, ""):                   {{Effective: t0.Add(-time.Hour), Micros: million}},
		ScheduleKey(CPU, ""):                      {{Effective: t0.Add(-time.Hour), Micros: million}},
		ScheduleKey(GPU, "NVIDIA H100 80GB HBM3"): {{Effective: t0.Add(-time.Hour), Micros: million}},
	}
	shape := Shape{GPUModel: "NVIDIA H100 80GB HBM3", GPUCount: 8, CPUMilli: 128_000, MemoryMiB: 512 * 1024}
	lines, err := PriceRun(shape, t0, t0, t0.Add(time.Hour), scheds)
	if err != nil {
		t.Fatalf("PriceRun: %v", err)
	}
	want := map[string]int64{GPU: 8 * million, CPU: 128 * million, Memory: 512 * million}
	for _, l := range lines {
		if l.Amount != want[l.Resource] {
			t.Errorf("%s: %d micro-units, want %d", l.Resource, l.Amount, want[l.Resource])
		}
		delete(want, l.Resource)
	}
	if len(want) != 0 {
		t.Errorf("no line for %v", want)
	}
	// Half a micro-unit rounds away from zero, in 128 bits as in 64.
	if got, _ := amountScaled(1, 1, MilliUnits, 1800, false); got != 0 {
		t.Errorf("1 micro-unit an hour for half a milli-unit-hour: %d, want 0 (0.0005 rounds to 0)", got)
	}
	if got, _ := amountScaled(1000, 1000, MilliUnits, 1800, false); got != 500 {
		t.Errorf("half an hour at 1000: %d, want 500", got)
	}
	if got, _ := amountScaled(-3, 1000, MilliUnits, 1800, false); got != -2 {
		t.Errorf("-1.5 rounds to %d, want -2 (away from zero)", got)
	}
	// An amount beyond int64 is an error for the caller, not a panic.
	huge := map[string]Schedule{ScheduleKey(Memory, ""): {{Effective: t0.Add(-time.Hour), Micros: math.MaxInt64}}}
	if _, err := PriceRun(Shape{MemoryMiB: 1 << 40}, t0, t0, t0.Add(time.Hour), huge); !errors.Is(err, ErrTooLarge) {
		t.Errorf("an amount beyond int64: %v, want ErrTooLarge", err)
	}
}
