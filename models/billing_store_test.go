package models

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Store-level tests of the money tables (SPEC §6): the ledger is
// append-only in the database itself, replays add nothing, corrections are
// reversing lines, quotas resolve user > groups > default, and rates cannot
// be back-dated.

// moneyFixture is a user with one workbench and one open usage interval,
// enough rows for the ledger's foreign keys.
type moneyFixture struct {
	s    *Store
	user *User
	wb   *Workbench
	iv   *UsageInterval
}

func newMoneyFixture(t *testing.T) *moneyFixture {
	t.Helper()
	s, _ := newTestStore(t)
	ctx := context.Background()
	u, err := s.CreateUser(ctx, NewUser{Username: "alice", Password: "correct-horse-1"})
	if err != nil {
		t.Fatal(err)
	}
	img := validImage()
	if err := s.CreateImage(ctx, &img); err != nil {
		t.Fatal(err)
	}
	fl := &Flavor{Name: "1x H100", GPUModel: "NVIDIA H100 80GB HBM3", GPUCount: 1, CPUMilli: 8000, MemoryMiB: 64 * 1024, Enabled: true}
	if err := s.CreateFlavor(ctx, fl); err != nil {
		t.Fatal(err)
	}
	wb := &Workbench{Name: "exp", OwnerID: u.ID, ImageID: img.ID, FlavorID: fl.ID, Token: "t"}
	if err := s.CreateWorkbench(ctx, wb, GPUNeed{}, nil); err != nil {
		t.Fatal(err)
	}
	iv := &UsageInterval{WorkbenchID: wb.ID, UserID: u.ID, GPUModel: fl.GPUModel, GPUCount: 1, CPUMilli: 8000, MemoryMiB: 64 * 1024,
		StartedAt: time.Date(2030, 3, 10, 10, 0, 0, 0, time.UTC)}
	if err := s.OpenInterval(ctx, iv); err != nil {
		t.Fatal(err)
	}
	return &moneyFixture{s: s, user: u, wb: wb, iv: iv}
}

// line is a GPU ledger line of the fixture's interval for the hour at h.
func (f *moneyFixture) line(h time.Time, amount int64) LedgerEntry {
	id := f.iv.ID
	return LedgerEntry{IdempotencyKey: fmt.Sprintf("iv:%d:gpu:%d", f.iv.ID, h.Unix()), UserID: f.user.ID, WorkbenchID: f.wb.ID,
		IntervalID: &id, Resource: "gpu", GPUModel: "NVIDIA H100 80GB HBM3", PeriodStart: h, PeriodEnd: h.Add(time.Hour),
		Seconds: 3600, QuantityMilli: 1000, RateMicros: amount, AmountMicros: amount}
}

func (f *moneyFixture) ledgerCount(t *testing.T) int {
	t.Helper()
	var n int
	if err := f.s.sql.QueryRow("SELECT COUNT(*) FROM ledger_entries").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestLedgerIsAppendOnly(t *testing.T) {
	f := newMoneyFixture(t)
	ctx := context.Background()
	h := f.iv.StartedAt
	if _, err := f.s.RecordBilling(ctx, f.iv.ID, []LedgerEntry{f.line(h, 3_000_000)}, h.Add(time.Hour), false); err != nil {
		t.Fatal(err)
	}
	// Every way the code could touch a stored line: raw SQL and gorm. The
	// triggers must refuse them all, whatever the caller.
	attempts := map[string]func() error{
		"sql update": func() error {
			_, err := f.s.sql.ExecContext(ctx, "UPDATE ledger_entries SET amount_micros = 0")
			return err
		},
		"sql delete": func() error {
			_, err := f.s.sql.ExecContext(ctx, "DELETE FROM ledger_entries")
			return err
		},
		"gorm update": func() error {
			return f.s.db.Model(&LedgerEntry{}).Where("1 = 1").Update("note", "edited").Error
		},
		"gorm delete": func() error {
			return f.s.db.Where("1 = 1").Delete(&LedgerEntry{}).Error
		},
		"upsert": func() error {
			_, err := f.s.sql.ExecContext(ctx, `INSERT INTO ledger_entries (idempotency_key, user_id, resource, period_start, period_end,
				seconds, quantity_milli, rate_micros, amount_micros, created_at)
				SELECT idempotency_key, user_id, resource, period_start, period_end, seconds, quantity_milli, rate_micros, 1, created_at
				FROM ledger_entries WHERE true ON CONFLICT(idempotency_key) DO UPDATE SET amount_micros = excluded.amount_micros`)
			return err
		},
	}
	for name, do := range attempts {
		err := do()
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: err = %v; want the append-only trigger to refuse it", name, err)
		}
	}
	lines, err := f.s.Statement(ctx, f.user.ID, h, h.Add(24*time.Hour))
	if err != nil || len(lines) != 1 || lines[0].AmountMicros != 3_000_000 || lines[0].Note != "" {
		t.Fatalf("after refused edits the ledger is %+v (%v); want the one line unchanged", lines, err)
	}
}

func TestRecordBillingReplayAddsNothing(t *testing.T) {
	f := newMoneyFixture(t)
	ctx := context.Background()
	h := f.iv.StartedAt
	lines := []LedgerEntry{f.line(h, 3_000_000), f.line(h.Add(time.Hour), 3_000_000)}
	added, err := f.s.RecordBilling(ctx, f.iv.ID, lines, h.Add(2*time.Hour), false)
	if err != nil || added != 2 {
		t.Fatalf("first record: added %d, %v; want 2", added, err)
	}
	// The same closure replayed (a crash between writing and noticing), even
	// with a different amount computed this time: the stored line wins.
	changed := []LedgerEntry{f.line(h, 9_999_999), f.line(h.Add(time.Hour), 9_999_999)}
	added, err = f.s.RecordBilling(ctx, f.iv.ID, changed, h.Add(2*time.Hour), false)
	if err != nil || added != 0 {
		t.Fatalf("replay: added %d, %v; want 0", added, err)
	}
	// A replay that overlaps and extends adds only the new period.
	more := append(lines, f.line(h.Add(2*time.Hour), 3_000_000))
	added, err = f.s.RecordBilling(ctx, f.iv.ID, more, h.Add(3*time.Hour), true)
	if err != nil || added != 1 {
		t.Fatalf("extending replay: added %d, %v; want 1", added, err)
	}
	if n := f.ledgerCount(t); n != 3 {
		t.Fatalf("%d ledger lines, want 3", n)
	}
	m, err := f.s.MonthTotals(ctx, f.user.ID, MonthStart(h))
	gpuSecs, amount := m.GPUSeconds, m.AmountMicros
	if err != nil || gpuSecs != 3*3600 || amount != 9_000_000 {
		t.Fatalf("month totals %d s, %d micros (%v); want 10800 s, 9000000", gpuSecs, amount, err)
	}
	// The billing mark moved with the last write, and settled it.
	ivs, err := f.s.IntervalsOf(ctx, f.wb.ID)
	if err != nil || len(ivs) != 1 || ivs[0].BilledThrough == nil || !ivs[0].BilledThrough.Equal(h.Add(3*time.Hour)) || !ivs[0].Settled {
		t.Fatalf("interval after billing: %+v (%v)", ivs, err)
	}
}

func TestReverseAppendsOnce(t *testing.T) {
	f := newMoneyFixture(t)
	ctx := context.Background()
	h := f.iv.StartedAt
	if _, err := f.s.RecordBilling(ctx, f.iv.ID, []LedgerEntry{f.line(h, 3_000_000), f.line(h.Add(time.Hour), 2_000_000)}, h.Add(2*time.Hour), false); err != nil {
		t.Fatal(err)
	}
	lines, _ := f.s.Statement(ctx, f.user.ID, h, h.Add(24*time.Hour))
	orig := lines[0]
	rev, err := f.s.Reverse(ctx, orig.ID, "wrong rate")
	if err != nil {
		t.Fatal(err)
	}
	if rev.ID == orig.ID || rev.Reverses == nil || *rev.Reverses != orig.ID || rev.AmountMicros != -orig.AmountMicros ||
		rev.Seconds != -orig.Seconds || rev.Note != "wrong rate" || rev.UserID != orig.UserID || !rev.PeriodStart.Equal(orig.PeriodStart) {
		t.Fatalf("reversal %+v does not cancel %+v", rev, orig)
	}
	// The original is still there, unchanged; the month nets to the other line.
	after, _ := f.s.Statement(ctx, f.user.ID, h, h.Add(24*time.Hour))
	if len(after) != 3 || after[0].ID != orig.ID || after[0].AmountMicros != orig.AmountMicros {
		t.Fatalf("statement after reversal: %+v", after)
	}
	m, _ := f.s.MonthTotals(ctx, f.user.ID, MonthStart(h))
	gpuSecs, amount := m.GPUSeconds, m.AmountMicros
	if gpuSecs != 3600 || amount != 2_000_000 {
		t.Fatalf("month totals after reversal: %d s, %d; want 3600 s, 2000000", gpuSecs, amount)
	}
	_, total, _ := f.s.UsageSummary(ctx, MonthStart(h), MonthStart(h).AddDate(0, 1, 0), "user", 0)
	if total != 2_000_000 {
		t.Fatalf("usage total after reversal %d, want 2000000", total)
	}
	// A second reversal of the same line would cancel it twice.
	_, err = f.s.Reverse(ctx, orig.ID, "again")
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("second reversal: %v; want a validation error", err)
	}
	if n := f.ledgerCount(t); n != 3 {
		t.Fatalf("%d lines after a refused reversal, want 3", n)
	}
	if _, err := f.s.Reverse(ctx, 999999, "nothing"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("reversing a missing line: %v; want ErrNotFound", err)
	}
}

func i64(v int64) *int64 { return &v }

func TestResolveLimits(t *testing.T) {
	type L = Limits
	cases := []struct {
		name   string
		def    L
		groups []L
		user   *L
		want   L
	}{
		{name: "nothing set is unlimited", want: L{}},
		{name: "default applies", def: L{MaxGPUs: i64(2), BudgetPerMonthMicros: i64(5)}, want: L{MaxGPUs: i64(2), BudgetPerMonthMicros: i64(5)}},
		{name: "a group overrides the default, up or down",
			def: L{MaxGPUs: i64(2), MaxWorkbenches: i64(3)}, groups: []L{{MaxGPUs: i64(8), MaxWorkbenches: i64(1)}},
			want: L{MaxGPUs: i64(8), MaxWorkbenches: i64(1)}},
		{name: "most generous group wins",
			def: L{MaxGPUs: i64(1)}, groups: []L{{MaxGPUs: i64(2)}, {MaxGPUs: i64(6)}, {MaxGPUs: i64(4)}},
			want: L{MaxGPUs: i64(6)}},
		{name: "a group that sets nothing inherits the default",
			def: L{MaxGPUs: i64(2)}, groups: []L{{}}, want: L{MaxGPUs: i64(2)}},
		// A group's empty field takes no part (as a group with no row):
		// it neither lifts another group's limit nor brings the default's.
		{name: "a group that sets no value does not lift another group's limit",
			groups: []L{{MaxGPUs: i64(4), GPUHoursPerMonth: i64(10)}, {GPUHoursPerMonth: i64(20)}},
			want:   L{MaxGPUs: i64(4), GPUHoursPerMonth: i64(20)}},
		{name: "a group that sets no value does not bring back the default",
			def: L{MaxGPUs: i64(8)}, groups: []L{{MaxGPUs: i64(2)}, {MaxWorkbenches: i64(5)}},
			want: L{MaxGPUs: i64(2), MaxWorkbenches: i64(5)}},
		{name: "an empty group row is no row",
			def: L{MaxGPUs: i64(8)}, groups: []L{{MaxWorkbenches: i64(2)}, {}},
			want: L{MaxGPUs: i64(8), MaxWorkbenches: i64(2)}},
		{name: "groups that set a lower bound: the smallest; the default where none does",
			def: L{MinIdleMinutes: i64(10)}, groups: []L{{MinIdleMinutes: i64(30)}, {}},
			want: L{MinIdleMinutes: i64(30)}},
		{name: "zero is a limit, not unlimited",
			groups: []L{{MaxGPUs: i64(0)}}, want: L{MaxGPUs: i64(0)}},
		{name: "user override beats groups and default, field by field",
			def: L{MaxGPUs: i64(2), MaxWorkbenches: i64(3)}, groups: []L{{MaxGPUs: i64(8)}},
			user: &L{MaxGPUs: i64(1)}, want: L{MaxGPUs: i64(1), MaxWorkbenches: i64(3)}},
		{name: "an empty user override inherits",
			def: L{MaxGPUs: i64(2)}, groups: []L{{MaxGPUs: i64(4)}}, user: &L{}, want: L{MaxGPUs: i64(4)}},
		{name: "allowed lists: union of groups",
			def: L{AllowedImages: []string{"a"}}, groups: []L{{AllowedImages: []string{"b"}}, {AllowedImages: []string{"c", "b"}}},
			want: L{AllowedImages: []string{"b", "c"}}},
		{name: "allowed lists: a group that lists nothing does not lift another's list",
			groups: []L{{AllowedFlavors: []string{"small"}}, {}}, want: L{AllowedFlavors: []string{"small"}}},
		{name: "allowed lists: the default's where no group lists",
			def: L{AllowedImages: []string{"a"}}, groups: []L{{MaxGPUs: i64(1)}}, want: L{MaxGPUs: i64(1), AllowedImages: []string{"a"}}},
		{name: "allowed lists: an empty list allows nothing (not everything)",
			groups: []L{{AllowedImages: []string{}}}, want: L{AllowedImages: []string{}}},
		{name: "allowed lists: user list replaces",
			groups: []L{{AllowedImages: []string{"b"}}}, user: &L{AllowedImages: []string{"x"}}, want: L{AllowedImages: []string{"x"}}},
		{name: "per model: the larger limit of groups that limit the model",
			groups: []L{{MaxGPUsPerModel: map[string]int{"H100": 1}}, {MaxGPUsPerModel: map[string]int{"H100": 3}}},
			want:   L{MaxGPUsPerModel: map[string]int{"H100": 3}}},
		// Group 1 does not limit A100 and group 2 does not limit H100: the
		// member is limited on neither.
		{name: "per model: a model one group leaves unlimited is unlimited",
			groups: []L{{MaxGPUsPerModel: map[string]int{"H100": 1}}, {MaxGPUsPerModel: map[string]int{"A100": 2}}},
			want:   L{}},
		{name: "per model: a group without a map takes no part",
			def: L{MaxGPUsPerModel: map[string]int{"H100": 8}}, groups: []L{{MaxGPUsPerModel: map[string]int{"H100": 1}}, {MaxGPUs: i64(4)}},
			want: L{MaxGPUs: i64(4), MaxGPUsPerModel: map[string]int{"H100": 1}}},
		{name: "per model: user map replaces",
			def: L{MaxGPUsPerModel: map[string]int{"H100": 1}}, user: &L{MaxGPUsPerModel: map[string]int{"H100": 4}},
			want: L{MaxGPUsPerModel: map[string]int{"H100": 4}}},
	}
	show := func(l L) string {
		p := func(v *int64) string {
			if v == nil {
				return "∞"
			}
			return fmt.Sprint(*v)
		}
		return fmt.Sprintf("{gpus %s wbs %s gpuh %s budget %s runtime %s per-model %v images %v flavors %v}",
			p(l.MaxGPUs), p(l.MaxWorkbenches), p(l.GPUHoursPerMonth), p(l.BudgetPerMonthMicros), p(l.MaxRuntimeHours),
			l.MaxGPUsPerModel, l.AllowedImages, l.AllowedFlavors)
	}
	norm := func(l L) L {
		if len(l.MaxGPUsPerModel) == 0 {
			l.MaxGPUsPerModel = nil
		}
		return l
	}
	for _, c := range cases {
		got := norm(ResolveLimits(c.def, c.groups, c.user))
		// nil (everything allowed) and empty (nothing allowed) print alike.
		sameNil := (got.AllowedImages == nil) == (c.want.AllowedImages == nil) && (got.AllowedFlavors == nil) == (c.want.AllowedFlavors == nil)
		if show(got) != show(norm(c.want)) || !sameNil || !reflect.DeepEqual(got.AllowedImages, c.want.AllowedImages) {
			t.Errorf("%s:\n got %s\nwant %s", c.name, show(got), show(c.want))
		}
	}
}

func TestEffectiveQuotaFromStore(t *testing.T) {
	f := newMoneyFixture(t)
	ctx := context.Background()
	s := f.s
	ml, _ := s.CreateGroup(ctx, "ml", "")
	vis, _ := s.CreateGroup(ctx, "vision", "")
	if err := s.AddGroupMember(ctx, ml.ID, f.user.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.AddGroupMember(ctx, vis.ID, f.user.ID); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.SetQuota(ctx, ScopeDefault, 0, Limits{MaxGPUs: i64(1), MaxWorkbenches: i64(2), BudgetPerMonthMicros: i64(100)}, "admin"))
	must(s.SetQuota(ctx, ScopeGroup, ml.ID, Limits{MaxGPUs: i64(4), BudgetPerMonthMicros: i64(50)}, "admin"))
	must(s.SetQuota(ctx, ScopeGroup, vis.ID, Limits{MaxGPUs: i64(2), BudgetPerMonthMicros: i64(300)}, "admin"))
	got, err := s.EffectiveQuota(ctx, f.user.ID)
	if err != nil {
		t.Fatal(err)
	}
	if *got.MaxGPUs != 4 || *got.MaxWorkbenches != 2 || *got.BudgetPerMonthMicros != 300 {
		t.Fatalf("groups + default: gpus %d wbs %d budget %d; want 4, 2 (default), 300", *got.MaxGPUs, *got.MaxWorkbenches, *got.BudgetPerMonthMicros)
	}
	must(s.SetQuota(ctx, ScopeUser, f.user.ID, Limits{MaxGPUs: i64(1)}, "admin"))
	got, _ = s.EffectiveQuota(ctx, f.user.ID)
	if *got.MaxGPUs != 1 || *got.BudgetPerMonthMicros != 300 {
		t.Fatalf("user override: gpus %d budget %d; want 1, 300", *got.MaxGPUs, *got.BudgetPerMonthMicros)
	}
	// Leaving a group takes its quota away.
	must(s.RemoveGroupMember(ctx, vis.ID, f.user.ID))
	got, _ = s.EffectiveQuota(ctx, f.user.ID)
	if *got.BudgetPerMonthMicros != 50 {
		t.Fatalf("after leaving vision the budget is %d, want 50", *got.BudgetPerMonthMicros)
	}
}

func TestSetQuotaValidation(t *testing.T) {
	f := newMoneyFixture(t)
	ctx := context.Background()
	bad := []struct {
		l     Limits
		field string
	}{
		{Limits{MaxGPUs: i64(-1)}, "max_gpus"},
		{Limits{MaxWorkbenches: i64(-1)}, "max_workbenches"},
		{Limits{GPUHoursPerMonth: i64(-5)}, "gpu_hours_per_month"},
		{Limits{BudgetPerMonthMicros: i64(-1)}, "budget_per_month_micros"},
		{Limits{MaxRuntimeHours: i64(-1)}, "max_runtime_hours"},
		{Limits{MaxGPUsPerModel: map[string]int{"H100": -1}}, "max_gpus_per_model"},
		{Limits{MaxGPUsPerModel: map[string]int{"": 2}}, "max_gpus_per_model"},
		// Beyond what the console's form takes (the API took them; GPU-hours
		// near int64's top wrapped around to "used up" in seconds).
		{Limits{GPUHoursPerMonth: i64(math.MaxInt64)}, "gpu_hours_per_month"},
		{Limits{MaxGPUs: i64(MaxQuotaNumber + 1)}, "max_gpus"},
		{Limits{MaxGPUsPerModel: map[string]int{"H100": MaxQuotaNumber + 1}}, "max_gpus_per_model"},
	}
	for _, c := range bad {
		err := f.s.SetQuota(ctx, ScopeUser, f.user.ID, c.l, "admin")
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("SetQuota(%+v) = %v; want a validation error on %s", c.l, err, c.field)
		}
	}
	if _, set, _ := f.s.Quota(ctx, ScopeUser, f.user.ID); set {
		t.Fatal("a refused quota was stored")
	}
	// A good quota round-trips, and setting again replaces it (one row).
	want := Limits{MaxGPUs: i64(0), MaxGPUsPerModel: map[string]int{"H100": 2}, AllowedImages: []string{"fake"}, AllowedFlavors: []string{}}
	if err := f.s.SetQuota(ctx, ScopeUser, f.user.ID, want, "admin"); err != nil {
		t.Fatal(err)
	}
	got, set, err := f.s.Quota(ctx, ScopeUser, f.user.ID)
	if err != nil || !set || got.MaxGPUs == nil || *got.MaxGPUs != 0 || got.MaxGPUsPerModel["H100"] != 2 ||
		!reflect.DeepEqual(got.AllowedImages, []string{"fake"}) || got.AllowedFlavors == nil || len(got.AllowedFlavors) != 0 {
		t.Fatalf("stored quota %+v (set %v, %v); want %+v (an empty allowed list stays empty, not 'all')", got, set, err, want)
	}
	if err := f.s.SetQuota(ctx, ScopeUser, f.user.ID, Limits{MaxWorkbenches: i64(3)}, "admin"); err != nil {
		t.Fatal(err)
	}
	got, _, _ = f.s.Quota(ctx, ScopeUser, f.user.ID)
	if got.MaxGPUs != nil || got.MaxWorkbenches == nil || *got.MaxWorkbenches != 3 || got.AllowedImages != nil {
		t.Fatalf("replaced quota %+v; want only max_workbenches 3", got)
	}
	var rows int
	f.s.sql.QueryRow("SELECT COUNT(*) FROM quotas WHERE scope = 'user'").Scan(&rows)
	if rows != 1 {
		t.Fatalf("%d quota rows for one user", rows)
	}
}

func TestAddPriceRateRules(t *testing.T) {
	f := newMoneyFixture(t)
	ctx := context.Background()
	now := time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)
	f.s.now = func() time.Time { return now }
	bad := []struct {
		r     PriceRate
		field string
	}{
		{PriceRate{Resource: "gpu", GPUModel: "H100", Micros: 1, EffectiveFrom: now.Add(-2 * time.Minute)}, "effective_from"},
		// The audit back-dated a price by 55 s; even a nanosecond is refused.
		{PriceRate{Resource: "gpu", GPUModel: "H100", Micros: 1, EffectiveFrom: now.Add(-55 * time.Second)}, "effective_from"},
		{PriceRate{Resource: "cpu", Micros: 1, EffectiveFrom: now.Add(-30 * time.Second)}, "effective_from"},
		{PriceRate{Resource: "cpu", Micros: 1, EffectiveFrom: now.Add(-time.Nanosecond)}, "effective_from"},
		{PriceRate{Resource: "gpu", GPUModel: "H100", Micros: 1, EffectiveFrom: now.AddDate(-1, 0, 0)}, "effective_from"},
		{PriceRate{Resource: "disk", Micros: 1}, "resource"},
		{PriceRate{Resource: "", Micros: 1}, "resource"},
		{PriceRate{Resource: "GPU", GPUModel: "H100", Micros: 1}, "resource"},
		{PriceRate{Resource: "gpu", GPUModel: "  ", Micros: 1}, "gpu_model"},
		{PriceRate{Resource: "cpu", Micros: -1}, "rate"},
		{PriceRate{Resource: "cpu", Micros: maxRateMicros + 1}, "rate"},
		// A CPU rate is not per GPU model: refused, not stored as every
		// workbench's CPU rate.
		{PriceRate{Resource: "cpu", GPUModel: "H100", Micros: 20_000}, "gpu_model"},
	}
	for _, c := range bad {
		r := c.r
		err := f.s.AddPriceRate(ctx, &r)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("AddPriceRate(%+v) = %v; want a validation error on %s", c.r, err, c.field)
		}
	}
	if hist, _ := f.s.PriceHistory(ctx); len(hist) != 0 {
		t.Fatalf("refused rates were stored: %+v", hist)
	}
	good := []PriceRate{
		{Resource: "gpu", GPUModel: "H100", Micros: 3_000_000},                                    // now
		{Resource: "gpu", GPUModel: "H100", Micros: 4_000_000, EffectiveFrom: now.Add(time.Hour)}, // future
		{Resource: "cpu", Micros: 20_000, EffectiveFrom: now},                                     // exactly now
	}
	for i := range good {
		if err := f.s.AddPriceRate(ctx, &good[i]); err != nil {
			t.Fatalf("AddPriceRate(%+v): %v", good[i], err)
		}
	}
	if good[0].EffectiveFrom != now {
		t.Fatalf("defaults not applied: %+v", good)
	}
	// Rates take effect at the very instant asked (billing cuts runs on
	// their own second grid, so a fraction is harmless), never earlier.
	odd := PriceRate{Resource: "memory", Micros: 6_000, EffectiveFrom: now.Add(2*time.Hour + 700*time.Millisecond)}
	if err := f.s.AddPriceRate(ctx, &odd); err != nil || !odd.EffectiveFrom.Equal(now.Add(2*time.Hour+700*time.Millisecond)) {
		t.Fatalf("a rate from %s stored from %s (%v)", now.Add(2*time.Hour+700*time.Millisecond), odd.EffectiveFrom, err)
	}
	f.s.now = func() time.Time { return now.Add(300 * time.Millisecond) }
	inst := PriceRate{Resource: "storage", Micros: 1}
	if err := f.s.AddPriceRate(ctx, &inst); err != nil || !inst.EffectiveFrom.Equal(now.Add(300*time.Millisecond)) {
		t.Fatalf("a rate effective now (%s) stored from %s (%v)", now.Add(300*time.Millisecond), inst.EffectiveFrom, err)
	}
	// This very second, written to the second (12:00:00 at 12:00:00.3),
	// means now: it was refused as "in the past (it is now 12:00:00)".
	same := PriceRate{Resource: "storage", Micros: 2, EffectiveFrom: now}
	if err := f.s.AddPriceRate(ctx, &same); err != nil || !same.EffectiveFrom.Equal(now.Add(300*time.Millisecond)) {
		t.Fatalf("a rate from this second (%s) at %s: stored from %s (%v)", now, now.Add(300*time.Millisecond), same.EffectiveFrom, err)
	}
	cur, _ := f.s.CurrentPrices(ctx, now.Add(time.Minute))
	if cur[PriceKey("gpu", "H100")].Micros != 3_000_000 || cur[PriceKey("cpu", "")].Micros != 20_000 {
		t.Fatalf("current prices %+v", cur)
	}
	later, _ := f.s.CurrentPrices(ctx, now.Add(2*time.Hour))
	if later[PriceKey("gpu", "H100")].Micros != 4_000_000 {
		t.Fatalf("prices after the change %+v", later)
	}
}

// TestCheckLaunchQuotaCountsHeldGPUs: the launch check adds the GPUs the
// user already holds (per model too) to what the launch asks, and names the
// limit that refuses it.
func TestCheckLaunchQuotaCountsHeldGPUs(t *testing.T) {
	f := newMoneyFixture(t)
	ctx := context.Background()
	const model = "NVIDIA H100 80GB HBM3"
	gpus := []string{"GPU-0", "GPU-1", "GPU-2", "GPU-3"}
	launch := func(name string, n int, lim Limits, month MonthUsage) error {
		t.Helper()
		if err := f.s.SetQuota(ctx, ScopeUser, f.user.ID, lim, "admin"); err != nil {
			t.Fatal(err)
		}
		wb := &Workbench{Name: name, OwnerID: f.user.ID, ImageID: f.wb.ImageID, FlavorID: f.wb.FlavorID, Token: "t"}
		ask := LaunchAsk{UserID: f.user.ID, Image: "Test", Flavor: "1x H100", GPUModel: model, GPUs: n}
		return f.s.CreateWorkbench(ctx, wb, GPUNeed{Model: model, Count: n, Candidates: gpus}, CheckLaunchQuota(ask, month))
	}
	limit := func(err error) string {
		var qe *QuotaError
		if errors.As(err, &qe) {
			return qe.Limit
		}
		return fmt.Sprint(err)
	}
	// The fixture's workbench (requested, no GPUs) is one active workbench.
	if err := launch("a", 2, Limits{MaxGPUs: i64(3)}, MonthUsage{}); err != nil {
		t.Fatalf("2 of 3 GPUs: %v", err)
	}
	if err := launch("b", 2, Limits{MaxGPUs: i64(3)}, MonthUsage{}); limit(err) != "max_gpus" || !strings.Contains(err.Error(), "at most 3 GPUs") {
		t.Fatalf("2 more with 2 held of 3: %v; want max_gpus naming 3", err)
	}
	if err := launch("b", 1, Limits{MaxGPUs: i64(3)}, MonthUsage{}); err != nil {
		t.Fatalf("the third GPU of 3: %v", err)
	}
	if err := launch("c", 1, Limits{MaxGPUsPerModel: map[string]int{model: 3}}, MonthUsage{}); limit(err) != "max_gpus_per_model" {
		t.Fatalf("a fourth H100 with 3 per model: %v; want max_gpus_per_model", err)
	}
	if err := launch("c", 0, Limits{MaxWorkbenches: i64(3)}, MonthUsage{}); limit(err) != "max_workbenches" {
		t.Fatalf("a fourth workbench with 3 allowed: %v; want max_workbenches", err)
	}
	if err := launch("c", 0, Limits{BudgetPerMonthMicros: i64(100)}, MonthUsage{AmountMicros: 100}); limit(err) != "budget_per_month_micros" {
		t.Fatalf("a launch with the budget spent: %v; want budget_per_month_micros", err)
	}
	if err := launch("c", 1, Limits{GPUHoursPerMonth: i64(1)}, MonthUsage{GPUSeconds: 3600}); limit(err) != "gpu_hours_per_month" {
		t.Fatalf("a GPU launch with the GPU-hours spent: %v; want gpu_hours_per_month", err)
	}
	if err := launch("c", 0, Limits{AllowedImages: []string{"other"}}, MonthUsage{}); limit(err) != "allowed_images" {
		t.Fatalf("a launch of an image not allowed: %v; want allowed_images", err)
	}
	// Refused launches leave no record and no binding.
	if n, _ := f.s.CountWorkbenches(ctx, f.user.ID); n != 3 {
		t.Fatalf("%d workbenches after refusals, want 3", n)
	}
	if a, _ := f.s.GPUAllocations(ctx); len(a) != 3 {
		t.Fatalf("%d GPUs bound, want 3", len(a))
	}
}

// The monthly rollup answers exactly what the ledger itself answers.
func TestMonthlyRollupMatchesLedger(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	u, err := s.CreateUser(ctx, NewUser{Username: "rollup", Password: "rollup-password"})
	if err != nil {
		t.Fatal(err)
	}
	month := time.Date(2031, 3, 1, 0, 0, 0, 0, time.UTC)
	var lines []LedgerEntry
	for i := 0; i < 50; i++ {
		start := month.Add(time.Duration(i*7) * time.Hour)
		res, model := "gpu", "NVIDIA H100 80GB HBM3"
		if i%3 == 1 {
			res, model = "cpu", ""
		}
		lines = append(lines, LedgerEntry{IdempotencyKey: fmt.Sprintf("t:%d", i), UserID: u.ID, GroupName: "g", WorkbenchID: fmt.Sprintf("wb%d", i%4),
			Resource: res, GPUModel: model, PeriodStart: start, PeriodEnd: start.Add(time.Hour), Seconds: 3600 - int64(i),
			QuantityMilli: 1500, RateMicros: 1_234_567, AmountMicros: 1_851_851 + int64(i)})
	}
	// Replays add nothing to the rollup either (the trigger fires only for
	// rows actually inserted).
	for k := 0; k < 2; k++ {
		if _, err := s.RecordBilling(ctx, 0, lines, month, false); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range []string{"user", "group", "gpu_model", "workbench", "resource"} {
		rolled, rt, err := s.UsageSummary(ctx, month, month.AddDate(0, 1, 0), g, 0)
		if err != nil {
			t.Fatal(err)
		}
		// The same range one second wider is served from the ledger itself.
		raw, rawTotal, err := s.UsageSummary(ctx, month.Add(-time.Second), month.AddDate(0, 1, 0), g, 0)
		if err != nil {
			t.Fatal(err)
		}
		if rt != rawTotal || fmt.Sprint(rolled) != fmt.Sprint(raw) {
			t.Errorf("group %s: rollup %v (%d) ≠ ledger %v (%d)", g, rolled, rt, raw, rawTotal)
		}
	}
}

func TestIdleBoundsResolve(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	def := Limits{MinIdleMinutes: n(10), MaxIdleMinutes: n(60)}
	groups := []Limits{{MinIdleMinutes: n(5), MaxIdleMinutes: n(120)}, {MaxIdleMinutes: n(240)}}
	got := ResolveLimits(def, groups, nil)
	// lowest minimum the groups set (5), highest maximum (240)
	if *got.MinIdleMinutes != 5 || *got.MaxIdleMinutes != 240 {
		t.Fatalf("groups: min %d max %d", *got.MinIdleMinutes, *got.MaxIdleMinutes)
	}
	got = ResolveLimits(def, groups, &Limits{MaxIdleMinutes: n(30)})
	if *got.MinIdleMinutes != 5 || *got.MaxIdleMinutes != 30 {
		t.Fatalf("user override: min %d max %d", *got.MinIdleMinutes, *got.MaxIdleMinutes)
	}
}

// Everyone's usage by workbench keeps two users' workbenches of one name
// apart, naming the owner (the admin's billing page summed bob's and
// alice's "exp" into one row); a user's own keeps the bare name, and lines
// of no workbench (a credit) keep the empty key.
func TestUsageByWorkbenchKeepsOwnersApart(t *testing.T) {
	f := newMoneyFixture(t)
	ctx := context.Background()
	bob, err := f.s.CreateUser(ctx, NewUser{Username: "bob", Password: "correct-horse-2"})
	if err != nil {
		t.Fatal(err)
	}
	bobs := &Workbench{Name: "exp", OwnerID: bob.ID, ImageID: f.wb.ImageID, FlavorID: f.wb.FlavorID, Token: "t"}
	if err := f.s.CreateWorkbench(ctx, bobs, GPUNeed{}, nil); err != nil {
		t.Fatal(err)
	}
	h := time.Date(2030, 3, 10, 10, 0, 0, 0, time.UTC)
	alices := f.line(h, 3_000_000)
	bobsLine := f.line(h, 5_000_000)
	bobsLine.IdempotencyKey, bobsLine.UserID, bobsLine.WorkbenchID, bobsLine.IntervalID = "bob:exp", bob.ID, bobs.ID, nil
	credit := LedgerEntry{IdempotencyKey: "credit:1", UserID: bob.ID, Resource: "credit", PeriodStart: h, PeriodEnd: h, AmountMicros: -1_000_000}
	if _, err := f.s.RecordBilling(ctx, 0, []LedgerEntry{alices, bobsLine, credit}, h, false); err != nil {
		t.Fatal(err)
	}
	month := MonthStart(h)
	for _, from := range []time.Time{month, month.Add(-time.Second)} { // the monthly rollup and the ledger itself
		items, total, err := f.s.UsageSummary(ctx, from, month.AddDate(0, 1, 0), "workbench", 0)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, it := range items {
			got[it.Key] = it.AmountMicros
		}
		if len(got) != 3 || got["alice/exp"] != 3_000_000 || got["bob/exp"] != 5_000_000 || got[""] != -1_000_000 || total != 7_000_000 {
			t.Errorf("everyone's usage by workbench from %s: %v (total %d), want alice/exp 3, bob/exp 5, \"\" −1", from, got, total)
		}
	}
	own, _, err := f.s.UsageSummary(ctx, month, month.AddDate(0, 1, 0), "workbench", bob.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(own) != 2 || own[0].Key != "exp" || own[0].AmountMicros != 5_000_000 {
		t.Errorf("bob's own usage by workbench: %+v, want exp 5 first, then his credit", own)
	}

	// Bob deletes his exp and makes a new one of that name: two rows, the
	// deleted one named as such (they were summed into one "exp").
	if err := f.s.MarkWorkbenchDeleted(ctx, bobs.ID, h.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	again := &Workbench{Name: "exp", OwnerID: bob.ID, ImageID: f.wb.ImageID, FlavorID: f.wb.FlavorID, Token: "t"}
	if err := f.s.CreateWorkbench(ctx, again, GPUNeed{}, nil); err != nil {
		t.Fatal(err)
	}
	newLine := f.line(h.Add(2*time.Hour), 2_000_000)
	newLine.IdempotencyKey, newLine.UserID, newLine.WorkbenchID, newLine.IntervalID = "bob:exp2", bob.ID, again.ID, nil
	if _, err := f.s.RecordBilling(ctx, 0, []LedgerEntry{newLine}, h.Add(2*time.Hour), false); err != nil {
		t.Fatal(err)
	}
	own, _, err = f.s.UsageSummary(ctx, month, month.AddDate(0, 1, 0), "workbench", bob.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, it := range own {
		got[it.Key] = it.AmountMicros
	}
	if deleted := "exp (deleted, " + bobs.ID + ")"; len(got) != 3 || got[deleted] != 5_000_000 || got["exp"] != 2_000_000 {
		t.Errorf("bob's usage after deleting exp and making another: %v, want %q 5 and exp 2 apart", got, deleted)
	}
}
