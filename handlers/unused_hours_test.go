package handlers

import "testing"

// The unused-time report words unit-seconds as hours the way the ledger
// line's note does (rounded to the hundredth): cut off, 132 s read 0.03
// in the report and 61 s read 0.02 on the bill.
func TestUnusedReportHoursAreRoundedAsTheBillsAre(t *testing.T) {
	for secs, want := range map[int64]string{0: "0.00", 17: "0.00", 18: "0.01", 61: "0.02", 132: "0.04", 3600: "1.00", 5382: "1.50", 35999: "10.00"} {
		if got := hoursText(secs); got != want {
			t.Errorf("hoursText(%d) = %q, want %q", secs, got, want)
		}
	}
}
