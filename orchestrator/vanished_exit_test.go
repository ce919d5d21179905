package orchestrator

import (
	"context"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/orchestrator/runtime"
)

// forgetfulEngine is the real engine whose event history has lost
// everything (as after an engine restart).
type forgetfulEngine struct{ runtime.Runtime }

func (forgetfulEngine) LastExit(context.Context, string, string, time.Time) (time.Time, bool, error) {
	return time.Time{}, false, nil
}

// A container removed (`docker rm -f`) while the portal was down is
// charged up to its exit as the engine recorded it — read from the
// engine's event history when the restarted portal reconciles — not only
// to its last heartbeat (the audit lost 42 s of real use that way). When
// the engine no longer has the event, the heartbeat is the fallback.
func TestRemovedWhilePortalDownBilledToEngineExit(t *testing.T) {
	if testing.Short() {
		t.Skip("real engine")
	}
	f := newEngineFixture(t, nil, Options{MinCharge: -1})
	wb := f.launch("gone")
	f.waitRunning(wb.ID)
	iv, err := f.store.OpenIntervalOf(f.ctx, wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The portal "goes down": nothing runs. The workbench keeps running a
	// while past its last heartbeat, then someone removes it by hand.
	time.Sleep(3 * time.Second)
	died := f.rmForce(wb.ID)

	// The portal comes back (a new manager, same data and install id).
	m2 := NewManager(f.store, f.m.pool, f.docker, f.installID, Options{MinCharge: -1}, f.log)
	if err := m2.Reconcile(f.ctx); err != nil {
		t.Fatal(err)
	}
	ivs, err := f.store.IntervalsOf(f.ctx, wb.ID)
	if err != nil || len(ivs) != 1 || ivs[0].EndedAt == nil {
		t.Fatalf("intervals %+v (%v); want one, closed", ivs, err)
	}
	if !ivs[0].EndedAt.Equal(died) {
		t.Fatalf("closed at %s; the engine says the container died at %s (heartbeat %s)", ivs[0].EndedAt, died, iv.HeartbeatAt)
	}
	var secs int64
	lines, _ := f.store.Statement(f.ctx, f.user.ID, iv.StartedAt.Add(-time.Hour), died.Add(time.Hour))
	for _, l := range lines {
		if l.Resource == pricing.CPU && l.WorkbenchID == wb.ID {
			secs += l.Seconds
		}
	}
	if want := pricing.ChargedSeconds(iv.StartedAt, died, 0); secs != want || want < 3 {
		t.Fatalf("charged %d s; the run lasted ⌈%s⌉ = %d s", secs, died.Sub(iv.StartedAt), want)
	}

	// Fallback: an engine that forgot closes at the last heartbeat.
	wb2 := f.launch("forgotten")
	f.waitRunning(wb2.ID)
	hb := time.Now().UTC()
	if err := f.store.HeartbeatIntervals(f.ctx, []string{wb2.ID}, hb); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	f.rmForce(wb2.ID)
	m3 := NewManager(f.store, f.m.pool, forgetfulEngine{f.docker}, f.installID, Options{MinCharge: -1}, f.log)
	if err := m3.Reconcile(f.ctx); err != nil {
		t.Fatal(err)
	}
	ivs, _ = f.store.IntervalsOf(f.ctx, wb2.ID)
	if len(ivs) != 1 || ivs[0].EndedAt == nil || !ivs[0].EndedAt.Equal(hb) {
		t.Fatalf("with no event history: %+v; want closed at the heartbeat %s", ivs, hb)
	}
	if got, _ := f.store.WorkbenchByID(f.ctx, wb2.ID); got.State != models.StateStopped {
		t.Fatalf("state %s, want stopped", got.State)
	}
}

// rmForce removes a workbench's container as `docker rm -f` does and
// returns the die time the engine reported for it.
func (f *engineFixture) rmForce(wbID string) time.Time {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(f.ctx, time.Minute)
	defer cancel()
	name := "wb-" + f.installID + "-" + wbID
	info, err := f.cli.ContainerInspect(ctx, name)
	if err != nil {
		f.t.Fatal(err)
	}
	msgs, errs := f.cli.Events(ctx, events.ListOptions{Filters: filters.NewArgs(
		filters.Arg("container", info.ID), filters.Arg("event", "die"))})
	if err := f.cli.ContainerRemove(ctx, info.ID, container.RemoveOptions{Force: true}); err != nil {
		f.t.Fatal(err)
	}
	select {
	case m := <-msgs:
		return time.Unix(0, m.TimeNano).UTC()
	case err := <-errs:
		f.t.Fatalf("events: %v", err)
	case <-ctx.Done():
		f.t.Fatal("no die event within a minute")
	}
	return time.Time{}
}
