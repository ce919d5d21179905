package models

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"workbench/models/pricing"
)

// preemptibleBy turns a usage summary into key → its preemptible part.
func preemptibleBy(t *testing.T) func(items []UsageItem, total int64, err error) map[string]int64 {
	return func(items []UsageItem, _ int64, err error) map[string]int64 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for _, it := range items {
			out[it.Key] += it.PreemptibleMicros
		}
		return out
	}
}

// The billing summaries say which part of each row was billed at the
// preemptible tier, as the statement's lines do (LineTierSQL): a
// preemptible run's GPU lines, less their reversal; not its CPU line, a
// standard run's GPU line nor a credit. Whole months (the ledger_monthly
// rollup, what the billing pages read) and other spans (the ledger) agree,
// and a group's statement has its part too. Before, the summaries had sums
// only.
func TestUsageSummarySaysThePreemptiblePart(t *testing.T) {
	f := newMoneyFixture(t)
	s, ctx := f.s, context.Background()
	lab, err := s.CreateGroup(ctx, "lab", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddGroupMember(ctx, lab.ID, f.user.ID); err != nil {
		t.Fatal(err)
	}
	h := f.iv.StartedAt
	if err := s.SetIntervalTier(ctx, f.wb.ID, pricing.TierPreemptible); err != nil {
		t.Fatal(err)
	}
	spot1, spot2 := f.line(h, 270_000), f.line(h.Add(time.Hour), 270_000)
	cpu := f.line(h, 50_000)
	cpu.IdempotencyKey, cpu.Resource, cpu.GPUModel = cpu.IdempotencyKey+":cpu", pricing.CPU, ""
	for _, l := range []*LedgerEntry{&spot1, &spot2, &cpu} {
		l.GroupName = "lab"
	}
	if _, err := s.RecordBilling(ctx, f.iv.ID, []LedgerEntry{spot1, spot2, cpu}, h.Add(2*time.Hour), true); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseInterval(ctx, f.wb.ID, h.Add(2*time.Hour), ""); err != nil {
		t.Fatal(err)
	}
	std := &UsageInterval{WorkbenchID: f.wb.ID, UserID: f.user.ID, GPUModel: f.iv.GPUModel, GPUCount: 1, CPUMilli: 8000, MemoryMiB: 64 * 1024,
		StartedAt: h.Add(3 * time.Hour)}
	if err := s.OpenInterval(ctx, std); err != nil {
		t.Fatal(err)
	}
	full := f.line(h.Add(3*time.Hour), 900_000)
	full.IntervalID, full.IdempotencyKey, full.GroupName = &std.ID, fmt.Sprintf("iv:%d:gpu", std.ID), "lab"
	if _, err := s.RecordBilling(ctx, std.ID, []LedgerEntry{full}, h.Add(4*time.Hour), false); err != nil {
		t.Fatal(err)
	}
	lines, err := s.Statement(ctx, f.user.ID, h.AddDate(0, 0, -1), h.AddDate(0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if l.IdempotencyKey == spot2.IdempotencyKey {
			if _, err := s.ReverseLines(ctx, []int64{l.ID}, "wrong node", "admin"); err != nil {
				t.Fatal(err)
			}
		}
	}
	month := MonthStart(h)
	for _, span := range []struct {
		name     string
		from, to time.Time
	}{{"the month (rollup)", month, month.AddDate(0, 1, 0)}, {"days (ledger)", month.AddDate(0, 0, 2), month.AddDate(0, 0, 20)}} {
		got := preemptibleBy(t)(s.UsageSummary(ctx, span.from, span.to, "resource", 0))
		if got[pricing.GPU] != 270_000 || got[pricing.CPU] != 0 {
			t.Errorf("%s by resource: preemptible %v, want gpu 270000 (one hour less its reversed twin), cpu 0", span.name, got)
		}
		got = preemptibleBy(t)(s.UsageSummary(ctx, span.from, span.to, "user", 0))
		if got["alice"] != 270_000 {
			t.Errorf("%s by user: preemptible %v, want alice 270000", span.name, got)
		}
		got = preemptibleBy(t)(s.UsageSummary(ctx, span.from, span.to, "user", f.user.ID))
		if got["alice"] != 270_000 {
			t.Errorf("%s, alice's own: preemptible %v, want 270000", span.name, got)
		}
		got = preemptibleBy(t)(s.GroupUsageSummary(ctx, span.from, span.to, "resource", lab.ID))
		if got[pricing.GPU] != 270_000 || got[pricing.CPU] != 0 {
			t.Errorf("%s, lab's statement by resource: preemptible %v, want gpu 270000, cpu 0", span.name, got)
		}
		if _, total, err := s.UsageSummary(ctx, span.from, span.to, "resource", 0); err != nil || total != 270_000+50_000+900_000 {
			t.Errorf("%s: total %d (%v), want the amounts unchanged", span.name, total, err)
		}
	}
}

// A database from before the rollup kept the preemptible part (schema
// 173): migration 174 fills it from the ledger, and the trigger keeps it
// for the lines written after.
func TestMigrationLedgerMonthlyPreemptible(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	raw, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, DBFileName)+"?_journal_mode=WAL&_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	sub, _ := fs.Sub(migrationFiles, "migrations")
	p, err := goose.NewProvider(goose.DialectSQLite3, raw, sub)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 173); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for i, tier := range []string{pricing.TierPreemptible, ""} {
		if _, err := raw.ExecContext(ctx, `INSERT INTO usage_intervals (id, workbench_id, user_id, cpu_milli, started_at, heartbeat_at, ended_at, tier)
			VALUES (?, 'wb', 1, 1000, ?, ?, ?, ?)`, i+1, now, now, now, tier); err != nil {
			t.Fatal(err)
		}
	}
	for i, l := range []struct {
		interval any
		resource string
		amount   int64
	}{{1, "gpu", 300_000}, {1, "cpu", 20_000}, {2, "gpu", 1_000_000}, {nil, "credit", -5_000}} {
		if _, err := raw.ExecContext(ctx, `INSERT INTO ledger_entries (idempotency_key, user_id, group_name, workbench_id, interval_id, resource, gpu_model,
			period_start, period_end, seconds, quantity_milli, rate_micros, amount_micros, note, created_at)
			VALUES (?, 1, '', 'wb', ?, ?, 'H100', ?, ?, 3600, 1000, 1, ?, '', ?)`, fmt.Sprintf("old:%d", i), l.interval, l.resource, now, now.Add(time.Hour), l.amount, now); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()

	s, err := Open(ctx, dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	defer s.Close()
	if u, err := s.CreateUser(ctx, NewUser{Username: "old", Password: "old-password-1"}); err != nil || u.ID != 1 {
		t.Fatalf("user 1: %+v (%v)", u, err)
	}
	month := MonthStart(now)
	items, total, err := s.UsageSummary(ctx, month, month.AddDate(0, 1, 0), "resource", 0)
	got := preemptibleBy(t)(items, total, err)
	if got["gpu"] != 300_000 || got["cpu"] != 0 || got["credit"] != 0 || total != 1_315_000 {
		t.Errorf("the month by resource after the migration: preemptible %v, total %d", got, total)
	}
	// A line written after: the trigger adds its part.
	id := int64(1)
	l := LedgerEntry{IdempotencyKey: "new:1", UserID: 1, WorkbenchID: "wb", IntervalID: &id, Resource: "gpu", GPUModel: "H100",
		PeriodStart: now, PeriodEnd: now.Add(time.Hour), Seconds: 3600, QuantityMilli: 1000, RateMicros: 1, AmountMicros: 100_000}
	if _, err := s.RecordBilling(ctx, 0, []LedgerEntry{l}, now, true); err != nil {
		t.Fatal(err)
	}
	got = preemptibleBy(t)(s.UsageSummary(ctx, month, month.AddDate(0, 1, 0), "resource", 0))
	if got["gpu"] != 400_000 {
		t.Errorf("after a new preemptible line: preemptible %v, want gpu 400000", got)
	}
}
