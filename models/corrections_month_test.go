package models

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A reversal of a line from an earlier month is booked in this month,
// money only: the earlier month's statement stays as exported, and this
// month's spend (the budget) gets the money back. A line of this month is
// reversed in its own period, seconds too, as before.
func TestReversalOfAnEarlierMonthIsBookedNow(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	u, err := s.CreateUser(ctx, NewUser{Username: "ada", Password: "ada-password", Role: RoleUser})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	s.SetClock(func() time.Time { return now })
	oct := time.Date(2026, 10, 10, 9, 0, 0, 0, time.UTC)
	dec := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	line := func(key string, at time.Time, amount int64) LedgerEntry {
		return LedgerEntry{IdempotencyKey: key, UserID: u.ID, WorkbenchID: "wb", Resource: "gpu", GPUModel: "NVIDIA H100 80GB HBM3",
			PeriodStart: at, PeriodEnd: at.Add(time.Hour), Seconds: 3600, QuantityMilli: 1000, RateMicros: amount, AmountMicros: amount}
	}
	if _, err := s.RecordBilling(ctx, 0, []LedgerEntry{line("oct", oct, 3_000_000), line("dec", dec, 2_000_000)}, now, true); err != nil {
		t.Fatal(err)
	}
	lines, err := s.Statement(ctx, u.ID, oct.AddDate(0, 0, -9), now)
	if err != nil || len(lines) != 2 {
		t.Fatalf("seeded: %+v (%v)", lines, err)
	}
	revs, err := s.ReverseLines(ctx, []int64{lines[0].ID, lines[1].ID}, "billed in error", "admin")
	if err != nil {
		t.Fatal(err)
	}
	if r := revs[0]; !r.PeriodStart.Equal(now) || !r.PeriodEnd.Equal(now) || r.Seconds != 0 || r.AmountMicros != -3_000_000 {
		t.Errorf("reversal of October's line: period %s–%s, %d s, %d µ; want dated now, money only", r.PeriodStart, r.PeriodEnd, r.Seconds, r.AmountMicros)
	}
	if r := revs[1]; !r.PeriodStart.Equal(dec) || r.Seconds != -3600 || r.AmountMicros != -2_000_000 {
		t.Errorf("reversal of December's line: period %s, %d s, %d µ; want its own period and seconds", r.PeriodStart, r.Seconds, r.AmountMicros)
	}
	octTotals, err := s.MonthTotals(ctx, u.ID, MonthStart(oct))
	if err != nil {
		t.Fatal(err)
	}
	decTotals, err := s.MonthTotals(ctx, u.ID, MonthStart(now))
	if err != nil {
		t.Fatal(err)
	}
	// October's statement: still its 3.00 (everything since October
	// includes December's lines: 3.00 + 2.00 − 3.00 − 2.00).
	if octLines, _ := s.Statement(ctx, u.ID, MonthStart(oct), MonthStart(oct).AddDate(0, 1, 0)); len(octLines) != 1 || octLines[0].AmountMicros != 3_000_000 {
		t.Errorf("October's statement changed: %+v", octLines)
	}
	if decTotals.AmountMicros != -3_000_000 || decTotals.GPUSeconds != 0 || octTotals.AmountMicros != 0 {
		t.Errorf("December: %d µ, %d GPU-s (want −3000000, 0); since October %d µ (want 0)", decTotals.AmountMicros, decTotals.GPUSeconds, octTotals.AmountMicros)
	}
}

// A credit over the limit is refused naming the limit in both units the
// portal takes it in (the form's currency units, the API's micro-units):
// "at most 1,000,000" read as micro-units to an API client.
func TestCreditLimitNamesItsUnits(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	u, err := s.CreateUser(ctx, NewUser{Username: "cleo", Password: "cleo-password-1"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Credit(ctx, u.ID, 1_000_000*1_000_000+1, "", "too much", "admin")
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "amount" || !strings.Contains(ve.Message, "currency units") || !strings.Contains(ve.Message, "1000000000000 micro-units") {
		t.Fatalf("a credit over the limit: %v, want the limit in currency units and micro-units", err)
	}
	if _, err := s.Credit(ctx, u.ID, 1_000_000*1_000_000, "", "the most", "admin"); err != nil {
		t.Fatalf("a credit at the limit: %v", err)
	}
}
