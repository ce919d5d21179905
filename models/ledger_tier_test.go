package models

import (
	"context"
	"fmt"
	"testing"
	"time"

	"workbench/models/pricing"
)

// TestStatementLinesCarryTheirTier: every read that lists ledger lines
// (Statement, StatementPage, EachStatementLine, StatementLinesAfter,
// LedgerLine, a reversal's answer) gives each line the price tier of its
// rate, read through its usage interval: the GPU line of a preemptible run
// and its reversal are "preemptible"; that run's CPU line (never
// discounted), a standard run's GPU line, home storage and a credit (no
// interval) are "". Before, a statement showed a discounted rate with
// nothing saying why.
func TestStatementLinesCarryTheirTier(t *testing.T) {
	f := newMoneyFixture(t)
	s, ctx := f.s, context.Background()
	h := f.iv.StartedAt
	if err := s.SetIntervalTier(ctx, f.wb.ID, pricing.TierPreemptible); err != nil {
		t.Fatal(err)
	}
	spot := f.line(h, 270_000)
	cpu := f.line(h, 50_000)
	cpu.IdempotencyKey, cpu.Resource, cpu.GPUModel = cpu.IdempotencyKey+":cpu", pricing.CPU, ""
	if _, err := s.RecordBilling(ctx, f.iv.ID, []LedgerEntry{spot, cpu}, h.Add(time.Hour), true); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseInterval(ctx, f.wb.ID, h.Add(time.Hour), ""); err != nil {
		t.Fatal(err)
	}
	std := &UsageInterval{WorkbenchID: f.wb.ID, UserID: f.user.ID, GPUModel: f.iv.GPUModel, GPUCount: 1, CPUMilli: 8000, MemoryMiB: 64 * 1024,
		StartedAt: h.Add(2 * time.Hour)}
	if err := s.OpenInterval(ctx, std); err != nil {
		t.Fatal(err)
	}
	full := f.line(h.Add(2*time.Hour), 900_000)
	full.IntervalID, full.IdempotencyKey = &std.ID, fmt.Sprintf("iv:%d:gpu", std.ID)
	if _, err := s.RecordBilling(ctx, std.ID, []LedgerEntry{full}, h.Add(3*time.Hour), false); err != nil {
		t.Fatal(err)
	}
	home := LedgerEntry{IdempotencyKey: "storage:1", UserID: f.user.ID, Resource: pricing.Storage, PeriodStart: h.Add(3 * time.Hour),
		PeriodEnd: h.Add(4 * time.Hour), Seconds: 3600, QuantityMilli: 10_000, RateMicros: 100, AmountMicros: 1}
	if _, err := s.RecordStorageBilling(ctx, 0, []LedgerEntry{home}, h.Add(4*time.Hour), false); err != nil {
		t.Fatal(err)
	}
	credit, err := s.Credit(ctx, f.user.ID, 1_000_000, "", "node down", "admin")
	if err != nil {
		t.Fatal(err)
	}
	lines, err := s.Statement(ctx, f.user.ID, h.AddDate(-10, 0, 0), h.AddDate(10, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int64{}
	for _, l := range lines {
		ids[l.IdempotencyKey] = l.ID
	}
	revs, err := s.ReverseLines(ctx, []int64{ids[spot.IdempotencyKey]}, "wrong node", "admin")
	if err != nil {
		t.Fatal(err)
	}
	if len(revs) != 1 || revs[0].Tier != pricing.TierPreemptible {
		t.Errorf("the reversal of a preemptible line answers tier %q, want %q", revs[0].Tier, pricing.TierPreemptible)
	}
	want := map[string]string{spot.IdempotencyKey: pricing.TierPreemptible, cpu.IdempotencyKey: "", full.IdempotencyKey: "",
		home.IdempotencyKey: "", credit.IdempotencyKey: "", fmt.Sprintf("reverse:%d", ids[spot.IdempotencyKey]): pricing.TierPreemptible}
	check := func(how string, key string, tier string) {
		t.Helper()
		w, ok := want[key]
		if !ok {
			t.Errorf("%s: unexpected line %q", how, key)
			return
		}
		if tier != w {
			t.Errorf("%s: line %q has tier %q, want %q", how, key, tier, w)
		}
	}
	count := func(how string, n int) {
		t.Helper()
		if n != len(want) {
			t.Errorf("%s: %d lines, want %d", how, n, len(want))
		}
	}
	from, to := h.AddDate(-10, 0, 0), h.AddDate(10, 0, 0)
	lines, err = s.Statement(ctx, f.user.ID, from, to)
	if err != nil {
		t.Fatal(err)
	}
	count("Statement", len(lines))
	for _, l := range lines {
		check("Statement", l.IdempotencyKey, l.Tier)
	}
	page, total, err := s.StatementPage(ctx, f.user.ID, from, to, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if total != int64(len(want)) {
		t.Errorf("StatementPage counts %d lines, want %d", total, len(want))
	}
	count("StatementPage", len(page))
	for _, l := range page {
		check("StatementPage", l.IdempotencyKey, l.Tier)
	}
	n := 0
	if err := s.EachStatementLine(ctx, f.user.ID, from, to, func(l *LedgerEntry) error {
		n++
		check("EachStatementLine", l.IdempotencyKey, l.Tier)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	count("EachStatementLine", n)
	// The month of the runs (the credit is dated now, another month).
	after, err := s.StatementLinesAfter(ctx, f.user.ID, h, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(want)-1 {
		t.Errorf("StatementLinesAfter: %d lines, want %d", len(after), len(want)-1)
	}
	for _, l := range after {
		check("StatementLinesAfter", l.IdempotencyKey, l.Tier)
	}
	one, err := s.LedgerLine(ctx, ids[spot.IdempotencyKey])
	if err != nil {
		t.Fatal(err)
	}
	check("LedgerLine", one.IdempotencyKey, one.Tier)
}
