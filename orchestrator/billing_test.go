package orchestrator

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"sort"
	"testing"
	"time"

	"workbench/models"
	"workbench/models/pricing"
)

// Billing against a real SQLite store, with the biller's clock set by the
// test (no engine). The scenario lives in 2099 because the store refuses
// rates that take effect in the past of the real clock, and a rate change
// at a chosen minute is the point of these tests.
//
// TestRateChangeMidRun of the issue is done here rather than on the engine:
// a real run would have to cross a clock hour. web/money_test.go has a
// real-engine run across a rate change a few seconds after launch.

const billGPU = "NVIDIA H100 80GB HBM3"

// Seeded default rates (models.SeedDefaultPrices), in force since 1970.
const (
	h100Rate   = 3_000_000 // per GPU-hour
	cpuRate    = 20_000    // per core-hour
	memoryRate = 5_000     // per GiB-hour
)

var billDay = time.Date(2099, 3, 10, 0, 0, 0, 0, time.UTC)

func at(hhmmss string) time.Time {
	var h, m int
	var s float64
	if _, err := fmt.Sscanf(hhmmss, "%d:%d:%g", &h, &m, &s); err != nil {
		panic(hhmmss)
	}
	return billDay.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s*float64(time.Second)))
}

type billFixture struct {
	t     *testing.T
	ctx   context.Context
	store *models.Store
	user  *models.User
	img   *models.Image
	fl    *models.Flavor
	n     int
}

func newBillFixture(t *testing.T) *billFixture {
	t.Helper()
	ctx := context.Background()
	s, err := models.Open(ctx, t.TempDir(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	// The bill day is far ahead (nothing real bills then); the store's
	// clock stands just before it, so its rates are not "too far ahead".
	s.SetClock(func() time.Time { return billDay.Add(-24 * time.Hour) })
	if err := s.SeedDefaultPrices(ctx, []string{billGPU}); err != nil {
		t.Fatal(err)
	}
	u, err := s.CreateUser(ctx, models.NewUser{Username: "alice", Password: "correct-horse-1"})
	if err != nil {
		t.Fatal(err)
	}
	img := &models.Image{Name: "Test", Image: "quay.io/jupyter/base-notebook:latest",
		StartCommand: "start-notebook.py --port={port} --base-url={base_url} --token={token}", Enabled: true}
	if err := s.CreateImage(ctx, img); err != nil {
		t.Fatal(err)
	}
	fl := &models.Flavor{Name: "2x H100", GPUModel: billGPU, GPUCount: 2, CPUMilli: 4000, MemoryMiB: 16 * 1024, Enabled: true}
	if err := s.CreateFlavor(ctx, fl); err != nil {
		t.Fatal(err)
	}
	return &billFixture{t: t, ctx: ctx, store: s, user: u, img: img, fl: fl}
}

// open records a workbench and an open interval of 2 GPUs, 4 cores and
// 16 GiB from start; it returns the workbench id.
func (f *billFixture) open(start time.Time) string {
	f.t.Helper()
	f.n++
	wb := &models.Workbench{Name: fmt.Sprintf("wb%d", f.n), OwnerID: f.user.ID, ImageID: f.img.ID, FlavorID: f.fl.ID, Token: "t"}
	if err := f.store.CreateWorkbench(f.ctx, wb, models.GPUNeed{}, nil); err != nil {
		f.t.Fatal(err)
	}
	iv := &models.UsageInterval{WorkbenchID: wb.ID, UserID: f.user.ID, GPUModel: billGPU, GPUCount: 2, CPUMilli: 4000, MemoryMiB: 16 * 1024, StartedAt: start}
	if err := f.store.OpenInterval(f.ctx, iv); err != nil {
		f.t.Fatal(err)
	}
	return wb.ID
}

func (f *billFixture) close(wbID string, end time.Time) {
	f.t.Helper()
	if err := f.store.CloseInterval(f.ctx, wbID, end, "stopped"); err != nil {
		f.t.Fatal(err)
	}
}

func (f *billFixture) rate(resource, model string, micros int64, from time.Time) {
	f.t.Helper()
	if err := f.store.AddPriceRate(f.ctx, &models.PriceRate{Resource: resource, GPUModel: model, Micros: micros, EffectiveFrom: from, CreatedBy: "test"}); err != nil {
		f.t.Fatal(err)
	}
}

// bill runs BillOnce with the clock at now and returns the lines added.
func (f *billFixture) bill(b *Billing, now time.Time) int {
	f.t.Helper()
	// The running workbenches were seen alive up to now (the manager's
	// heartbeat); billing writes only hours a heartbeat has passed.
	open, err := f.store.OpenIntervals(f.ctx, 0)
	if err != nil {
		f.t.Fatal(err)
	}
	var alive []string
	for _, iv := range open {
		alive = append(alive, iv.WorkbenchID)
	}
	if err := f.store.HeartbeatIntervals(f.ctx, alive, now); err != nil {
		f.t.Fatal(err)
	}
	b.now = func() time.Time { return now }
	n, err := b.BillOnce(f.ctx)
	if err != nil {
		f.t.Fatalf("BillOnce at %s: %v", now.Format(time.TimeOnly), err)
	}
	return n
}

func (f *billFixture) statement(from, to time.Time) []models.LedgerEntry {
	f.t.Helper()
	lines, err := f.store.Statement(f.ctx, f.user.ID, from, to)
	if err != nil {
		f.t.Fatal(err)
	}
	return lines
}

// wantLine is one expected ledger line.
type wantLine struct {
	resource   string
	start, end string
	seconds    int64
	rate       int64
	amount     int64
}

func lineKey(resource string, start time.Time) string {
	return resource + "@" + start.UTC().Format(time.TimeOnly)
}

// checkLines compares the ledger with want, as a set keyed by resource and
// period start, and checks the ledger's own arithmetic.
func checkLines(t *testing.T, got []models.LedgerEntry, want []wantLine) {
	t.Helper()
	byKey := map[string]models.LedgerEntry{}
	for _, l := range got {
		k := lineKey(l.Resource, l.PeriodStart)
		if _, dup := byKey[k]; dup {
			t.Errorf("two ledger lines for %s", k)
		}
		byKey[k] = l
		if l.AmountMicros != pricing.Amount(l.RateMicros, l.QuantityMilli, l.Seconds, false) {
			t.Errorf("%s: amount %d is not rate × quantity × seconds (%d × %d × %d)", k, l.AmountMicros, l.RateMicros, l.QuantityMilli, l.Seconds)
		}
		if int64(l.PeriodEnd.Sub(l.PeriodStart)/time.Second) != l.Seconds {
			t.Errorf("%s: %d seconds for the period %s–%s", k, l.Seconds, l.PeriodStart.Format(time.TimeOnly), l.PeriodEnd.Format(time.TimeOnly))
		}
	}
	for _, w := range want {
		k := lineKey(w.resource, at(w.start))
		l, ok := byKey[k]
		if !ok {
			t.Errorf("no ledger line %s", k)
			continue
		}
		delete(byKey, k)
		if !l.PeriodEnd.Equal(at(w.end)) || l.Seconds != w.seconds || l.RateMicros != w.rate || l.AmountMicros != w.amount {
			t.Errorf("%s: got end %s, %d s at %d = %d; want end %s, %d s at %d = %d", k,
				l.PeriodEnd.Format(time.TimeOnly), l.Seconds, l.RateMicros, l.AmountMicros, w.end, w.seconds, w.rate, w.amount)
		}
	}
	for k := range byKey {
		t.Errorf("unexpected ledger line %s", k)
	}
}

// The example: 10:45:00.3–12:15:00 with 2 GPUs and the GPU rate
// changing at 11:30, billed as time passes.
func TestBillingSplitsAtHoursAndRateChanges(t *testing.T) {
	f := newBillFixture(t)
	const newRate = 4_000_000
	f.rate(pricing.GPU, billGPU, newRate, at("11:30:00"))
	wb := f.open(at("10:45:00.3"))
	b := NewBilling(f.store, 60*time.Second)

	// Before the first hour boundary nothing is final yet.
	if n := f.bill(b, at("10:59:59")); n != 0 {
		t.Fatalf("billed %d lines before the first whole hour", n)
	}
	// 11:10: only [10:45, 11:00) may be written; the rest is priced live.
	if n := f.bill(b, at("11:10:00")); n != 3 {
		t.Fatalf("at 11:10 BillOnce added %d lines, want 3 (gpu, cpu, memory up to 11:00)", n)
	}
	for _, l := range f.statement(billDay, billDay.AddDate(0, 0, 1)) {
		// Lines lie on the run's own second grid (it started at .3): the
		// second that straddles 11:00 is the last one written.
		if l.PeriodEnd.After(at("11:00:00.3")) {
			t.Fatalf("an open interval was billed past the last whole hour: %s %s–%s", l.Resource, l.PeriodStart, l.PeriodEnd)
		}
	}
	live, err := unbilledCompute(f.ctx, b, f.user.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	// [11:00, 11:10): 2 GPUs × 600 s at 3.00, 4 cores and 16 GiB.
	wantLive := pricing.Amount(h100Rate, 2000, 600, false) + pricing.Amount(cpuRate, 4000, 600, false) + pricing.Amount(memoryRate, 16000, 600, false)
	if live.AmountMicros != wantLive || live.GPUSeconds != 1200 {
		t.Fatalf("unbilled at 11:10: %d micros, %d GPU-s; want %d, 1200", live.AmountMicros, live.GPUSeconds, wantLive)
	}
	month, err := b.MonthUsage(f.ctx, f.user.ID)
	if err != nil {
		t.Fatal(err)
	}
	if month.AmountMicros != 1_540_000+wantLive || month.GPUSeconds != 1800+1200 {
		t.Fatalf("month usage at 11:10: %+v; want ledger 1540000 + live %d, 3000 GPU-s", month, wantLive)
	}

	if n := f.bill(b, at("12:05:00")); n != 4 {
		t.Fatalf("at 12:05 BillOnce added %d lines, want 4 (gpu split at 11:30, cpu, memory)", n)
	}
	if n := f.bill(b, at("12:05:00")); n != 0 {
		t.Fatalf("BillOnce again at 12:05 added %d lines", n)
	}
	f.close(wb, at("12:15:00"))
	if n := f.bill(b, at("12:20:00")); n != 3 {
		t.Fatalf("after closing, BillOnce added %d lines, want 3 (12:00–12:15)", n)
	}
	for _, now := range []string{"12:20:00", "13:30:00", "23:59:59"} {
		if n := f.bill(b, at(now)); n != 0 {
			t.Fatalf("BillOnce at %s added %d lines to a settled interval", now, n)
		}
	}
	b.now = func() time.Time { return at("13:00:00") }
	if live, _ := unbilledCompute(f.ctx, b, 0, ""); live.AmountMicros != 0 {
		t.Fatalf("a settled interval still has %d unbilled", live.AmountMicros)
	}

	// 10:45:00.3–12:15:00 is ⌈5399.7⌉ = 5400 s; each line's period lies
	// on the run's second grid (whole seconds from 10:45:00.3), and the
	// billed end is 12:15:00.3.
	want := []wantLine{
		{"gpu", "10:45:00.3", "11:00:00.3", 900, h100Rate, 1_500_000},
		{"gpu", "11:00:00.3", "11:30:00.3", 1800, h100Rate, 3_000_000},
		{"gpu", "11:30:00.3", "12:00:00.3", 1800, newRate, 4_000_000},
		{"gpu", "12:00:00.3", "12:15:00.3", 900, newRate, 2_000_000},
		{"cpu", "10:45:00.3", "11:00:00.3", 900, cpuRate, 20_000},
		{"cpu", "11:00:00.3", "12:00:00.3", 3600, cpuRate, 80_000},
		{"cpu", "12:00:00.3", "12:15:00.3", 900, cpuRate, 20_000},
		{"memory", "10:45:00.3", "11:00:00.3", 900, memoryRate, 20_000},
		{"memory", "11:00:00.3", "12:00:00.3", 3600, memoryRate, 80_000},
		{"memory", "12:00:00.3", "12:15:00.3", 900, memoryRate, 20_000},
	}
	lines := f.statement(billDay, billDay.AddDate(0, 0, 1))
	checkLines(t, lines, want)
	checkTotals(t, f, lines, 10_740_000)

	// The same interval closed first and billed in one go gives the very
	// same lines: incremental billing never changes the result.
	g := newBillFixture(t)
	g.rate(pricing.GPU, billGPU, newRate, at("11:30:00"))
	g.close(g.open(at("10:45:00.3")), at("12:15:00"))
	if n := g.bill(NewBilling(g.store, 60*time.Second), at("12:20:00")); n != len(want) {
		t.Fatalf("one-shot billing added %d lines, want %d", n, len(want))
	}
	checkLines(t, g.statement(billDay, billDay.AddDate(0, 0, 1)), want)
}

// checkTotals: every summary of the ledger adds up to its lines, exactly.
func checkTotals(t *testing.T, f *billFixture, lines []models.LedgerEntry, want int64) {
	t.Helper()
	var sum, gpuSecs int64
	for _, l := range lines {
		sum += l.AmountMicros
		if l.Resource == pricing.GPU {
			gpuSecs += l.Seconds * l.QuantityMilli / 1000
		}
	}
	if sum != want {
		t.Errorf("lines sum to %d, want %d", sum, want)
	}
	from := models.MonthStart(billDay)
	to := from.AddDate(0, 1, 0)
	for _, g := range []string{"user", "group", "gpu_model", "workbench", "resource"} {
		items, total, err := f.store.UsageSummary(f.ctx, from, to, g, 0)
		if err != nil {
			t.Fatal(err)
		}
		var itemSum, itemGPU int64
		for _, it := range items {
			itemSum += it.AmountMicros
			itemGPU += it.GPUSeconds
		}
		if total != sum || itemSum != sum || itemGPU != gpuSecs {
			t.Errorf("usage by %s: total %d, items %d, GPU-s %d; the lines say %d and %d GPU-s", g, total, itemSum, itemGPU, sum, gpuSecs)
		}
	}
	m, err := f.store.MonthTotals(f.ctx, f.user.ID, from)
	mGPU, mAmount := m.GPUSeconds, m.AmountMicros
	if err != nil || mGPU != gpuSecs || mAmount != sum {
		t.Errorf("month totals %d GPU-s, %d (%v); the lines say %d GPU-s, %d", mGPU, mAmount, err, gpuSecs, sum)
	}
}

// An open interval: the ledger holds whole past hours, Unbilled the rest,
// and together they are exactly the price of the run so far — at least its
// minimum charge, which a run owes from its first second.
func TestBillingOpenIntervalLedgerPlusUnbilled(t *testing.T) {
	f := newBillFixture(t)
	f.rate(pricing.GPU, billGPU, 4_500_000, at("12:20:00"))
	start := at("09:59:59.9")
	wb := f.open(start)
	b := NewBilling(f.store, 60*time.Second)
	scheds, err := f.store.Schedules(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	shape := pricing.Shape{GPUModel: billGPU, GPUCount: 2, CPUMilli: 4000, MemoryMiB: 16 * 1024}
	for _, now := range []string{"10:00:00.5", "10:30:00", "11:00:00", "12:34:56.7", "13:00:01"} {
		f.bill(b, at(now))
		var ledger int64
		for _, l := range f.statement(billDay, billDay.AddDate(0, 0, 1)) {
			ledger += l.AmountMicros
			if l.PeriodEnd.Add(-time.Second).After(at(now).Truncate(time.Hour)) {
				t.Errorf("at %s a line ends at %s, after the last whole hour", now, l.PeriodEnd.Format(time.TimeOnly))
			}
		}
		live, err := unbilledCompute(f.ctx, b, f.user.ID, wb)
		if err != nil {
			t.Fatal(err)
		}
		end := at(now)
		if owed := start.Add(60 * time.Second); end.Before(owed) {
			end = owed
		}
		lines, err := pricing.PriceShape(shape, start, end, scheds)
		if err != nil {
			t.Fatal(err)
		}
		if whole := pricing.SumResources(lines); ledger+live.AmountMicros != whole {
			t.Errorf("at %s: ledger %d + unbilled %d = %d; the run so far costs %d", now, ledger, live.AmountMicros, ledger+live.AmountMicros, whole)
		}
	}
}

func TestBillingMinimumCharge(t *testing.T) {
	cases := []struct {
		name       string
		minCharge  time.Duration
		start, end string
		// GPU seconds per line, in period order.
		want []int64
	}{
		{"a 10 s run costs the 60 s minimum", 60 * time.Second, "10:00:00", "10:00:10", []int64{60}},
		{"a partial second counts whole", 0, "10:00:00", "10:00:10.001", []int64{11}},
		{"the span is rounded up once, the start kept", 0, "10:00:00.9", "10:00:10.2", []int64{10}},
		{"the audit's 91.603 s is 92 s", 0, "10:00:00.9", "10:01:32.503", []int64{92}},
		{"a second straddling the hour is charged once", 0, "10:59:59.5", "11:00:01.4", []int64{1, 1}},
		{"no minimum: 10 s cost 10 s", 0, "10:00:00", "10:00:10", []int64{10}},
		{"a minimum that crosses the hour is split there", 60 * time.Second, "10:59:30.5", "10:59:40.2", []int64{30, 30}},
		{"a run longer than the minimum is not padded", 60 * time.Second, "10:00:00", "10:01:30", []int64{90}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newBillFixture(t)
			f.close(f.open(at(c.start)), at(c.end))
			f.bill(NewBilling(f.store, c.minCharge), at("12:00:00"))
			var got []int64
			var amount, want int64
			for _, l := range f.statement(billDay, billDay.AddDate(0, 0, 1)) {
				amount += l.AmountMicros
				if l.Resource == pricing.GPU {
					got = append(got, l.Seconds)
				}
			}
			for _, s := range c.want {
				want += pricing.Amount(h100Rate, 2000, s, false) + pricing.Amount(cpuRate, 4000, s, false) + pricing.Amount(memoryRate, 16000, s, false)
			}
			if !reflect.DeepEqual(got, c.want) || amount != want {
				t.Fatalf("GPU lines %v s costing %d in all; want %v s costing %d", got, amount, c.want, want)
			}
		})
	}
}

// A rate change never rewrites a past charge: a closed month's statement is
// the same before and after new rates, and after billing runs again.
func TestRateChangeLeavesPastStatementAlone(t *testing.T) {
	f := newBillFixture(t)
	b := NewBilling(f.store, 60*time.Second)
	march := models.MonthStart(billDay)
	april := march.AddDate(0, 1, 0)
	f.close(f.open(at("10:00:00")), at("12:30:00"))
	// A run still going when March ends: once April has begun, its March
	// part is a whole past hour and is written, so March is final.
	late := f.open(time.Date(2099, 3, 31, 23, 30, 0, 0, time.UTC))
	f.bill(b, april.Add(time.Minute))

	type snapshot struct {
		Items map[string][]models.UsageItem
		Total int64
		Lines []models.LedgerEntry
	}
	snap := func() snapshot {
		s := snapshot{Items: map[string][]models.UsageItem{}}
		for _, g := range []string{"user", "resource", "gpu_model", "workbench"} {
			items, total, err := f.store.UsageSummary(f.ctx, march, april, g, f.user.ID)
			if err != nil {
				t.Fatal(err)
			}
			sort.Slice(items, func(i, j int) bool { return items[i].Key < items[j].Key })
			s.Items[g], s.Total = items, total
		}
		s.Lines = f.statement(march, april)
		for i := range s.Lines {
			s.Lines[i].CreatedAt = time.Time{}
		}
		return s
	}
	before := snap()
	if before.Total == 0 || len(before.Lines) == 0 {
		t.Fatal("nothing billed in March")
	}

	// The GPU price rises from April on. A second rate is back-dated into
	// the billed March hours, which AddPriceRate refuses against the real
	// clock; the fake clock here lets it through, to show that even then
	// billing leaves written lines alone.
	const aprilRate = 9_000_000
	f.rate(pricing.GPU, billGPU, aprilRate, april)
	f.rate(pricing.GPU, billGPU, 7_000_000, at("11:00:00"))
	f.close(late, april.Add(30*time.Minute))
	for _, now := range []time.Time{april.Add(time.Hour), april.Add(2 * time.Hour)} {
		f.bill(b, now)
	}
	if after := snap(); !reflect.DeepEqual(before, after) {
		t.Fatalf("March changed after a rate change:\nbefore %+v\nafter  %+v", before, after)
	}
	// The run across midnight: its March part at the old rate (already
	// written), its April part at the new one.
	var aprilGPU []models.LedgerEntry
	for _, l := range f.statement(april, april.AddDate(0, 1, 0)) {
		if l.Resource == pricing.GPU {
			aprilGPU = append(aprilGPU, l)
		}
	}
	if len(aprilGPU) != 1 || aprilGPU[0].RateMicros != aprilRate || aprilGPU[0].Seconds != 1800 ||
		aprilGPU[0].AmountMicros != pricing.Amount(aprilRate, 2000, 1800, false) {
		t.Fatalf("April GPU lines %+v; want one of 1800 s at %d", aprilGPU, aprilRate)
	}
}

// The rate shown beside a running workbench and on the launch form is the
// rate in force now, not a blend of this clock hour's rates.
func TestHourlyRateIsTheRateInForceNow(t *testing.T) {
	f := newBillFixture(t)
	f.rate(pricing.GPU, billGPU, 4_000_000, at("11:30:00"))
	b := NewBilling(f.store, 60*time.Second)
	shape := pricing.Shape{GPUModel: billGPU, GPUCount: 2, CPUMilli: 4000, MemoryMiB: 16 * 1024}
	for now, gpu := range map[string]int64{"11:10:00": h100Rate, "11:29:59": h100Rate, "11:30:00": 4_000_000, "11:40:00": 4_000_000, "12:10:00": 4_000_000} {
		b.now = func() time.Time { return at(now) }
		got, err := b.HourlyRate(f.ctx, shape)
		if err != nil {
			t.Fatal(err)
		}
		if want := 2*gpu + 4*cpuRate + 16*memoryRate; got != want {
			t.Errorf("hourly rate at %s: %d, want %d (GPU at %d)", now, got, want, gpu)
		}
	}
}

// A rate that takes effect mid-second (an admin's "now") must not lose any
// usage: metering is in whole seconds, and each line's idempotency key is
// its interval, resource and start second, so a cut inside a second once
// made two GPU lines share a key and the second, holding the run, was
// dropped.
func TestSubSecondRateChangeLosesNothing(t *testing.T) {
	f := newBillFixture(t)
	f.rate(pricing.GPU, billGPU, 4_000_000, at("11:30:00.192"))
	f.close(f.open(at("11:29:59.5")), at("11:31:10"))
	f.bill(NewBilling(f.store, 60*time.Second), at("12:00:00"))
	var secs, amount int64
	for _, l := range f.statement(billDay, billDay.AddDate(0, 0, 1)) {
		if l.Resource == pricing.GPU {
			secs += l.Seconds
			amount += l.AmountMicros
		}
	}
	// 11:29:59–11:31:10: 71 s; the change applies from a whole second.
	want := pricing.Amount(h100Rate, 2000, 1, false) + pricing.Amount(4_000_000, 2000, 70, false)
	if secs != 71 || amount != want {
		t.Fatalf("GPU lines cover %d s costing %d; want 71 s costing %d", secs, amount, want)
	}
}

// A workbench whose heartbeat stopped (its container died while the portal
// was down) is not billed past the hour its last heartbeat reached, so
// closing it at that heartbeat later never finds lines beyond its end.
func TestOpenIntervalBilledOnlyThroughHeartbeat(t *testing.T) {
	f := newBillFixture(t)
	wb := f.open(at("10:45:00"))
	b := NewBilling(f.store, 60*time.Second)
	if err := f.store.HeartbeatIntervals(f.ctx, []string{wb}, at("10:59:40")); err != nil {
		t.Fatal(err)
	}
	b.now = func() time.Time { return at("11:00:05") }
	if n, err := b.BillOnce(f.ctx); err != nil || n != 0 {
		t.Fatalf("billed %d lines (%v) past the last heartbeat", n, err)
	}
	f.close(wb, at("10:59:40"))
	f.bill(b, at("11:01:00"))
	var secs int64
	for _, l := range f.statement(billDay, billDay.AddDate(0, 0, 1)) {
		if l.Resource == pricing.GPU {
			secs += l.Seconds
		}
	}
	if secs != 880 { // 10:45:00 → 10:59:40
		t.Fatalf("GPU seconds %d, want 880", secs)
	}
}

// A running workbench's rate is what its run is charged: the shape its open
// interval took at the start. An administrator who edits the flavor (here
// from 2 GPUs to 4) changes the next run's price, and the page must not
// show the running one at a rate the ledger will never charge.
func TestRunningRateIsTheRunsNotTheEditedFlavors(t *testing.T) {
	f := newBillFixture(t)
	id := f.open(at("10:00:00"))
	if err := f.store.SetWorkbenchState(f.ctx, id, models.StateRunning, 100, "", nil); err != nil {
		t.Fatal(err)
	}
	f.fl.GPUCount, f.fl.MemoryMiB = 4, 32*1024
	if err := f.store.UpdateFlavor(f.ctx, f.fl); err != nil {
		t.Fatal(err)
	}
	wb, err := f.store.WorkbenchByID(f.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	b := NewBilling(f.store, 60*time.Second)
	b.now = func() time.Time { return at("10:30:00") }
	costs, err := b.Costs(f.ctx, []models.Workbench{*wb}, map[int64]*models.Flavor{f.fl.ID: f.fl})
	if err != nil {
		t.Fatal(err)
	}
	run := int64(2*h100Rate + 4*cpuRate + 16*memoryRate) // the open interval's 2 GPUs, 4 cores, 16 GiB
	if got := costs[id].PerHourMicros; got != run {
		t.Errorf("rate of the running workbench %d, want %d (its run's shape; the edited flavor costs %d)",
			got, run, 4*h100Rate+4*cpuRate+32*memoryRate)
	}
	if got, want := costs[id].SoFarMicros, run/2; got != want {
		t.Errorf("cost of half an hour %d, want %d", got, want)
	}
}

// A GPU run's CPU and memory lines carry its GPU model, so the month by GPU
// model puts the workbench's whole cost under the model; a credit stays
// apart, under no model, and is not mixed into the model's row.
func TestBillingByGPUModelTakesTheRunsWholeCost(t *testing.T) {
	f := newBillFixture(t)
	wb := f.open(at("10:00:00"))
	b := NewBilling(f.store, 60*time.Second)
	f.close(wb, at("10:30:00"))
	if n := f.bill(b, at("10:31:00")); n != 3 {
		t.Fatalf("billed %d lines, want gpu, cpu and memory", n)
	}
	var run int64
	for _, l := range f.statement(billDay, billDay.AddDate(0, 0, 1)) {
		if l.GPUModel != billGPU {
			t.Errorf("the %s line carries GPU model %q, want the run's %q", l.Resource, l.GPUModel, billGPU)
		}
		run += l.AmountMicros
	}
	if _, err := f.store.Credit(f.ctx, f.user.ID, 5_000_000, "", "goodwill", "admin"); err != nil {
		t.Fatal(err)
	}
	// The credit is dated by the store's clock, the day before.
	items, _, err := f.store.UsageSummary(f.ctx, billDay.AddDate(0, 0, -1), billDay.AddDate(0, 0, 1), "gpu_model", 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, it := range items {
		got[it.Key] = it.AmountMicros
	}
	if len(got) != 2 || got[billGPU] != run || got[""] != -5_000_000 {
		t.Fatalf("by GPU model %v; want %s = the run's %d and the credit alone (-5000000) under no model", got, billGPU, run)
	}
}

// unbilledCompute prices what running compute has not put in the ledger
// yet (userID 0: everyone's, wbID "": every workbench), as the pages'
// accruing figures do without home storage.
func unbilledCompute(ctx context.Context, b *Billing, userID int64, wbID string) (models.MonthUsage, error) {
	scheds, err := b.store.Schedules(ctx)
	if err != nil {
		return models.MonthUsage{}, err
	}
	return b.unbilled(ctx, scheds, userID, wbID, time.Time{})
}
