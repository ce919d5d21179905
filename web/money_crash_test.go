package web_test

import (
	"context"
	"math"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"

	"workbench/models"
	"workbench/models/pricing"
)

// TestBillingSurvivesPortalCrash (SPEC §6 rule 7): two workbenches run; the
// portal is SIGKILLed; while it is down one container is stopped (Docker
// keeps its exit time) and the other is removed (inspect has nothing to
// say; the engine's event history has its die event). After the restart
// the first is billed exactly its real running time, the second up to its
// removal; the time the portal was down is not billed, and no period is
// billed twice however often billing runs.
func TestBillingSurvivesPortalCrash(t *testing.T) {
	cli := dockerClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const heartbeat = time.Second
	mp := newMoneyPortal(t, ctx, cli, "WORKBENCH_HEARTBEAT_INTERVAL="+heartbeat.String())
	pp, installID := mp.pp, mp.installID
	openStore := func() *models.Store { return mp.openStore(t, ctx) }
	var store *models.Store
	mp.start(t)
	p, alice := pp.http, mp.alice
	stopped, removed := moneyLaunch(t, p, alice, "stopped-while-down"), moneyLaunch(t, p, alice, "removed-while-down")
	for _, id := range []string{stopped, removed} {
		waitState(t, p, alice, id, "running")
	}
	cs, ok1 := containerOf(t, cli, installID, stopped)
	cr, ok2 := containerOf(t, cli, installID, removed)
	if !ok1 || !ok2 || !cs.running || !cr.running {
		t.Fatalf("containers before the crash: %+v %v, %+v %v", cs, ok1, cr, ok2)
	}
	removedStart, err := time.Parse(time.RFC3339Nano, cr.startedAt)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * heartbeat) // a few heartbeats on record

	killed := time.Now()
	if err := pp.signal(syscall.SIGKILL, 10*time.Second); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("portal exit after SIGKILL: %v", err)
	}
	grace := 5
	if err := cli.ContainerStop(ctx, cs.id, container.StopOptions{Timeout: &grace}); err != nil {
		t.Fatal(err)
	}
	rmBefore := time.Now()
	if err := cli.ContainerRemove(ctx, cr.id, container.RemoveOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	rmAfter := time.Now()
	info, err := cli.ContainerInspect(ctx, cs.id)
	if err != nil {
		t.Fatal(err)
	}
	started, err1 := time.Parse(time.RFC3339Nano, info.State.StartedAt)
	finished, err2 := time.Parse(time.RFC3339Nano, info.State.FinishedAt)
	if err1 != nil || err2 != nil || info.State.Running {
		t.Fatalf("stopped container: running %v, started %q, finished %q", info.State.Running, info.State.StartedAt, info.State.FinishedAt)
	}
	time.Sleep(3 * time.Second) // portal down: this must not be billed

	pp.start()
	for _, id := range []string{stopped, removed} {
		deadline := time.Now().Add(30 * time.Second)
		for {
			_, wb := p.api("GET", "/api/v1/workbenches/"+id, alice, "")
			if wb["state"] == "stopped" {
				t.Logf("%s: stopped after the restart: %q", wb["name"], wb["reason"])
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s still %v 30s after the restart", wb["name"], wb["state"])
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	time.Sleep(3 * time.Second) // three more billing rounds: replays must add nothing

	code, usage := p.api("GET", "/api/v1/usage?group_by=workbench", alice, "")
	if code != 200 {
		t.Fatalf("usage: %d %v", code, usage)
	}
	billed := map[string]int64{}
	for _, it := range usage["items"].([]any) {
		m := it.(map[string]any)
		billed[m["key"].(string)] = num(m["gpu_seconds"])
	}

	// Stopped while down: billed its real running time, from Docker's start
	// to Docker's exit, rounded up to the second (within 1 s).
	real := finished.Sub(started)
	want := int64(math.Ceil(real.Seconds()))
	if got := billed["stopped-while-down"]; got < want-1 || got > want+1 {
		t.Errorf("stopped while down: billed %d GPU-s; the container ran %s (%d s)", got, real.Round(time.Millisecond), want)
	} else {
		t.Logf("stopped while down: billed %d GPU-s for a real run of %s", got, real.Round(time.Millisecond))
	}
	// Removed while down: billed to its exit, read from the engine's event
	// history (the die event of the forced removal), not to its last
	// heartbeat before the kill.
	lo := int64(math.Ceil(rmBefore.Sub(removedStart).Seconds()))
	hi := int64(math.Ceil(rmAfter.Sub(removedStart).Seconds()))
	if got := billed["removed-while-down"]; got < lo || got > hi {
		t.Errorf("removed while down: billed %d GPU-s; it was removed %s–%s after its start (want %d–%d)", got,
			rmBefore.Sub(removedStart).Round(time.Millisecond), rmAfter.Sub(removedStart).Round(time.Millisecond), lo, hi)
	} else {
		t.Logf("removed while down: billed %d GPU-s, removed %s after its start (heartbeats stopped %s after it)", got,
			rmAfter.Sub(removedStart).Round(time.Millisecond), killed.Sub(removedStart).Round(time.Millisecond))
	}

	// The ledger itself, read beside the running portal: one closed,
	// settled interval per workbench; per resource, lines that tile the
	// billed span with no gap, overlap or repeat.
	store = openStore()
	defer store.Close()
	u, err := store.UserByUsername(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	lines, err := store.Statement(ctx, u.ID, killed.AddDate(0, 0, -1), killed.AddDate(0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{stopped, removed} {
		ivs, err := store.IntervalsOf(ctx, id)
		if err != nil || len(ivs) != 1 || ivs[0].EndedAt == nil || !ivs[0].Settled {
			t.Fatalf("intervals of %s: %+v (%v); want one, closed and settled", id, ivs, err)
		}
		iv := ivs[0]
		if id == stopped && !iv.EndedAt.Equal(finished) {
			t.Errorf("the stopped container's interval ends at %s; Docker says it exited at %s", iv.EndedAt, finished)
		}
		from, to := pricing.BilledSpan(iv.StartedAt, *iv.EndedAt, 0)
		byResource := map[string][]models.LedgerEntry{}
		for _, l := range lines {
			if l.IntervalID != nil && *l.IntervalID == iv.ID {
				byResource[l.Resource] = append(byResource[l.Resource], l)
			}
		}
		for _, res := range []string{"gpu", "cpu", "memory"} {
			ls := byResource[res]
			sort.Slice(ls, func(i, j int) bool { return ls[i].PeriodStart.Before(ls[j].PeriodStart) })
			cur := from
			for _, l := range ls {
				if !l.PeriodStart.Equal(cur) {
					t.Errorf("%s %s: a line starts at %s, expected %s (gap or overlap)", id, res, l.PeriodStart, cur)
				}
				cur = l.PeriodEnd
			}
			if !cur.Equal(to) {
				t.Errorf("%s %s: lines end at %s, the billed span at %s", id, res, cur, to)
			}
		}
	}

	if err := pp.signal(syscall.SIGTERM, 30*time.Second); err != nil {
		t.Fatalf("portal exit after SIGTERM: %v", err)
	}
}
