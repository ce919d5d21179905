package orchestrator

import (
	"math/big"
	"testing"
	"time"

	"workbench/models/pricing"
)

// A home volume's storage lines of a month add up to its size × rate ×
// the month's time, to the micro-unit. Each hour's line was rounded on its
// own (100 GiB at 0.10 per GiB-month is 13 698.63 an hour, billed 13 699),
// and the month's 744 lines came to 10.192056 for the 10.191781 the month
// costs; the hours now carry their remainders, as the seconds of a run
// do. The volume was made mid-month at an odd second and is billed by
// passes a few hours apart, as the portal bills, across the months.
func TestStorageMonthAddsUpToSizeTimesRateTimesTime(t *testing.T) {
	f := newBillFixture(t)
	b := NewBilling(f.store, 60*time.Second)
	const size = 100_000 // milli-GiB: 100 GiB
	const rate = 100_000 // seeded: 0.10 per GiB-month
	made := time.Date(2099, 2, 20, 13, 17, 5, 0, time.UTC)
	march, april := time.Date(2099, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2099, 4, 1, 0, 0, 0, 0, time.UTC)
	if err := f.store.RecordVolume(f.ctx, f.user.ID, "home-alice", size, made, made, 100_000); err != nil {
		t.Fatal(err)
	}
	for now := made.Add(7 * time.Hour); now.Before(april.Add(8 * time.Hour)); now = now.Add(7 * time.Hour) {
		if err := f.store.RecordVolume(f.ctx, f.user.ID, "home-alice", size, now, made, 100_000); err != nil {
			t.Fatal(err)
		}
		f.bill(b, now)
	}
	var sum, secs int64
	for _, l := range f.statement(march, april) {
		if l.Resource != pricing.Storage {
			continue
		}
		if l.RateMicros != rate || l.QuantityMilli != size {
			t.Fatalf("line %+v: rate or size not the volume's", l)
		}
		sum += l.AmountMicros
		secs += l.Seconds
	}
	if secs != 744*3600 {
		t.Fatalf("March's storage lines hold %d s, want 744 h", secs)
	}
	// size (milli-GiB) × rate (per GiB-month) × seconds / (1000 × 730 h).
	exact := new(big.Rat).SetFrac(big.NewInt(size*rate*secs), big.NewInt(1000*730*3600))
	diff := new(big.Rat).Sub(new(big.Rat).SetInt64(sum), exact)
	if diff.Abs(diff).Cmp(big.NewRat(1, 1)) > 0 {
		t.Errorf("March's storage lines add up to %d, want %s (within a micro-unit)", sum, exact.FloatString(2))
	}
}
