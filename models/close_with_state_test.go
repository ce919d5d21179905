package models

import (
	"context"
	"testing"
	"time"
)

// Every close path ends metering in the transaction that changes the
// state: a workbench set stopped or failed, or deleted, has no open
// interval afterwards, whatever the engine reports later.
func TestStateChangeClosesMetering(t *testing.T) {
	ctx := context.Background()
	end := time.Date(2030, 3, 10, 10, 7, 3, 250_000_000, time.UTC)
	for _, c := range []struct {
		name   string
		change func(f *moneyFixture) error
		reason string
	}{
		{"stopped", func(f *moneyFixture) error {
			return f.s.SetWorkbenchState(ctx, f.wb.ID, StateStopped, 0, "", map[string]any{"stopped_at": end})
		}, "stopped"},
		{"failed", func(f *moneyFixture) error {
			return f.s.SetWorkbenchState(ctx, f.wb.ID, StateFailed, 0, "boom", map[string]any{"stopped_at": end})
		}, "boom"},
		{"deleted", func(f *moneyFixture) error { return f.s.MarkWorkbenchDeleted(ctx, f.wb.ID, end) }, "deleted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newMoneyFixture(t)
			// Moving through stopping keeps it metered: the container runs
			// until it exits.
			if err := f.s.SetWorkbenchState(ctx, f.wb.ID, StateStopping, 0, "", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := f.s.OpenIntervalOf(ctx, f.wb.ID); err != nil {
				t.Fatalf("stopping closed the interval: %v", err)
			}
			if err := c.change(f); err != nil {
				t.Fatal(err)
			}
			ivs, err := f.s.IntervalsOf(ctx, f.wb.ID)
			if err != nil || len(ivs) != 1 || ivs[0].EndedAt == nil {
				t.Fatalf("intervals %+v (%v): want one, closed", ivs, err)
			}
			if !ivs[0].EndedAt.Equal(end) || ivs[0].EndReason != c.reason {
				t.Fatalf("closed at %s (%q), want %s (%q)", ivs[0].EndedAt, ivs[0].EndReason, end, c.reason)
			}
		})
	}
}
