package orchestrator

import (
	"testing"
	"time"

	"workbench/models"
	"workbench/models/pricing"
)

// A run going across midnight at a month's start: the new month's budget
// counts only its part since midnight — before the hourly line for the old
// month's last hour is written and after — never last month's unbilled
// time (the audit saw it count until the first hourly line). The clock is
// the biller's, set by the test.
func TestMonthStartSplitsTheRunningIntervalForBudgets(t *testing.T) {
	f := newBillFixture(t)
	b := NewBilling(f.store, 60*time.Second)
	april := time.Date(2099, 4, 1, 0, 0, 0, 0, time.UTC)
	start := april.Add(-30*time.Minute - 400*time.Millisecond)
	f.open(start)
	perSecond := func(secs int64) int64 {
		return pricing.Amount(h100Rate, 2000, secs, false) + pricing.Amount(cpuRate, 4000, secs, false) + pricing.Amount(memoryRate, 16000, secs, false)
	}
	check := func(now time.Time, wantSecs int64) {
		t.Helper()
		b.now = func() time.Time { return now }
		use, err := b.MonthUsage(f.ctx, f.user.ID)
		if err != nil {
			t.Fatal(err)
		}
		if use.GPUSeconds != 2*wantSecs || use.AmountMicros != perSecond(wantSecs) {
			t.Fatalf("at %s the month's usage is %d GPU-s, %d; want %d GPU-s, %d (only since midnight)",
				now.Format(time.RFC3339Nano), use.GPUSeconds, use.AmountMicros, 2*wantSecs, perSecond(wantSecs))
		}
	}
	// Just before midnight, all of it is March's.
	b.now = func() time.Time { return april.Add(-time.Second) }
	if use, _ := b.MonthUsage(f.ctx, f.user.ID); use.GPUSeconds != 2*pricing.ChargedSeconds(start, april.Add(-time.Second), 0) {
		t.Fatalf("before midnight: %d GPU-s", use.GPUSeconds)
	}
	// Midnight passes: nothing written yet; April holds 10 minutes (the
	// second straddling midnight, from 23:59:59.6, is March's).
	check(april.Add(10*time.Minute), 600)
	// The hourly pass writes March's last half hour: April unchanged.
	f.bill(b, april.Add(10*time.Minute))
	var march int64
	for _, l := range f.statement(april.AddDate(0, -1, 0), april) {
		if l.Resource == pricing.GPU {
			march += l.Seconds
		}
	}
	if march != pricing.ChargedSeconds(start, april, 0) {
		t.Fatalf("March's GPU lines: %d s, want %d", march, pricing.ChargedSeconds(start, april, 0))
	}
	check(april.Add(10*time.Minute), 600)
	check(april.Add(70*time.Minute+300*time.Millisecond), 4200)
	if got := models.MonthStart(april.Add(time.Minute)); !got.Equal(april) {
		t.Fatal(got)
	}
}
