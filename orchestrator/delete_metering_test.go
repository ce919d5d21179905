package orchestrator

import (
	"fmt"
	"testing"
	"time"

	"workbench/models/pricing"
)

// Deleting a running workbench ends its metering in the same transaction
// that marks it deleted, at the container's exit time, with no help from
// the engine's die event: here no event is ever read (the manager's Run,
// which watches events and reconciles, is not running at all). Before, the
// interval closed only if the die event won a race against the deletion,
// and otherwise stayed open for ever, its live cost counting against the
// user's budget. 50 deletions, in rounds of 10 running workbenches.
func TestDeleteClosesMeteringWithoutEngineEvents(t *testing.T) {
	if testing.Short() {
		t.Skip("real engine")
	}
	f := newEngineFixture(t, nil, Options{MinCharge: -1})
	const rounds, perRound = 5, 10
	for r := 0; r < rounds; r++ {
		ids := make([]string, perRound)
		for i := range ids {
			ids[i] = f.launch(fmt.Sprintf("del-%d-%d", r, i)).ID
		}
		for _, id := range ids {
			f.waitRunning(id)
		}
		for _, id := range ids {
			before := time.Now().UTC()
			if err := f.m.Delete(f.ctx, id, f.user, false); err != nil {
				t.Fatalf("delete %s: %v", id, err)
			}
			after := time.Now().UTC()
			ivs, err := f.store.IntervalsOf(f.ctx, id)
			if err != nil || len(ivs) != 1 {
				t.Fatalf("intervals of %s: %+v (%v)", id, ivs, err)
			}
			iv := ivs[0]
			if iv.EndedAt == nil {
				t.Fatalf("round %d: deleted workbench %s still metered (interval open)", r, id)
			}
			// Docker's exit time: between the call and its return (the
			// engine's clock is this machine's).
			if iv.EndedAt.Before(before.Add(-time.Second)) || iv.EndedAt.After(after.Add(time.Second)) {
				t.Errorf("%s ended at %s, outside the Delete call %s–%s", id, iv.EndedAt, before, after)
			}
			if !iv.Settled || iv.EndReason != "deleted" {
				t.Errorf("%s: settled %v, reason %q; want settled, \"deleted\"", id, iv.Settled, iv.EndReason)
			}
		}
	}
	// Nothing of the deleted workbenches is priced live any more, and the
	// ledger holds each run's exact seconds.
	live, err := unbilledCompute(f.ctx, f.m.Billing(), f.user.ID, "")
	if err != nil || live.AmountMicros != 0 {
		t.Fatalf("after deleting everything, %d micro-units are still priced live (%v)", live.AmountMicros, err)
	}
	lines, err := f.store.Statement(f.ctx, f.user.ID, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	open, err := f.store.OpenIntervals(f.ctx, f.user.ID)
	if err != nil || len(open) != 0 {
		t.Fatalf("%d intervals still open (%v)", len(open), err)
	}
	secs := map[int64]int64{}
	for _, l := range lines {
		if l.Resource == pricing.CPU {
			secs[*l.IntervalID] += l.Seconds
		}
	}
	if len(secs) != rounds*perRound {
		t.Fatalf("CPU lines for %d runs, want %d", len(secs), rounds*perRound)
	}
}
