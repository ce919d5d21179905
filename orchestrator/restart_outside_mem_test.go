package orchestrator

import (
	"context"
	"testing"
	"time"
)

// A container stopped and started again behind the portal's back (docker
// stop, docker start, while the portal was down): reconciliation ends the
// metered run at the exit and meters the new run from its start, so the
// time it was down is not billed (the first run stayed open across it).
func TestMemRestartOutsideThePortalIsNotBilledWhileDown(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	before, err := r.store.OpenIntervalOf(ctx, r.wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	r.m.billing.minCharge = time.Minute
	c, _ := r.rt.Container("c-" + r.wb.ID)
	// As Docker reports it after the restart: running since the new start,
	// the last exit kept.
	exited := before.StartedAt.Add(20 * time.Second)
	restarted := exited.Add(40 * time.Second)
	c.StartedAt, c.FinishedAt = restarted, exited
	r.rt.AddContainer(c)

	if err := r.m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	ivs, err := r.store.IntervalsOf(ctx, r.wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ivs) != 2 || ivs[0].EndedAt == nil || !ivs[0].EndedAt.Equal(exited) || !ivs[1].StartedAt.Equal(restarted) || ivs[1].EndedAt != nil {
		for _, iv := range ivs {
			t.Logf("interval %s – %v", iv.StartedAt, iv.EndedAt)
		}
		t.Fatalf("want the run ended at the exit %s and a new one open from %s", exited, restarted)
	}
	// The part the restart ended is billed as it ran, without a minimum
	// charge of its own (it had one, overlapping the next part's).
	lines, err := r.store.Statement(ctx, r.wb.OwnerID, before.StartedAt.Add(-time.Hour), restarted.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var gpuSecs int64
	for _, l := range lines {
		if l.Resource == "gpu" && l.IntervalID != nil && *l.IntervalID == ivs[0].ID {
			gpuSecs += l.Seconds
		}
	}
	if gpuSecs != 20 {
		t.Errorf("the part the restart ended is billed %d GPU-seconds, want the 20 it ran (no minimum of its own)", gpuSecs)
	}
	// Reconciling again changes nothing.
	if err := r.m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if again, _ := r.store.IntervalsOf(ctx, r.wb.ID); len(again) != 2 {
		t.Fatalf("a second reconciliation made %d intervals", len(again))
	}
}
