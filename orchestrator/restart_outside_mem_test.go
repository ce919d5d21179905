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
	// Reconciling again changes nothing.
	if err := r.m.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if again, _ := r.store.IntervalsOf(ctx, r.wb.ID); len(again) != 2 {
		t.Fatalf("a second reconciliation made %d intervals", len(again))
	}
}
