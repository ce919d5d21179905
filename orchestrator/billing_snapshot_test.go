package orchestrator

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A month's use read while billing settles a stopped run counts the run
// once: in the ledger or still accruing, never in neither. Read in two
// steps, a settlement between them dropped it, and a queued launch was
// placed right after its owner's budget stopped the run before it (the
// budget looked unspent by that run's cost).
func TestMonthUsageCountsARunBeingSettled(t *testing.T) {
	f := newBillFixture(t)
	b := NewBilling(f.store, 60*time.Second)
	now := at("12:00:00")
	b.now = func() time.Time { return now }
	for round := range 15 {
		wb := f.open(at("10:00:00"))
		f.close(wb, at("11:00:00"))
		before, err := b.MonthUsage(f.ctx, f.user.ID)
		if err != nil {
			t.Fatal(err)
		}
		var lowest atomic.Int64
		lowest.Store(before.AmountMicros)
		var reads atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				u, err := b.MonthUsage(f.ctx, f.user.ID)
				if err != nil {
					t.Error(err)
					return
				}
				if u.AmountMicros < lowest.Load() {
					lowest.Store(u.AmountMicros)
				}
				reads.Add(1)
			}
		}()
		for reads.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		if _, err := b.BillOnce(f.ctx); err != nil {
			t.Fatal(err)
		}
		for n := reads.Load(); reads.Load() < n+2; {
			time.Sleep(time.Millisecond)
		}
		close(stop)
		wg.Wait()
		after, err := b.MonthUsage(f.ctx, f.user.ID)
		if err != nil {
			t.Fatal(err)
		}
		if after.AmountMicros != before.AmountMicros {
			t.Fatalf("round %d: %d before billing, %d after; the run costs the same once billed", round, before.AmountMicros, after.AmountMicros)
		}
		if got := lowest.Load(); got != before.AmountMicros {
			t.Fatalf("round %d: a read during billing saw %d, not %d: the settling run was counted nowhere", round, got, before.AmountMicros)
		}
	}
}
