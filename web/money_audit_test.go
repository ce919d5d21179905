package web_test

import (
	"context"
	"fmt"
	"math/rand"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/orchestrator/runtime"
)

// TestMoneyAudit is the independent audit, end to end: ten fake-Jupyter
// workbenches run for random times and end in every way — stopped and
// deleted through the API, killed and removed behind the portal's back,
// some of it while the portal is SIGKILLed and down. Then every expected
// charge is recomputed from the engine alone (docker inspect's start time,
// the die event's time) and the price list, and compared with the ledger to
// the micro-unit. The table is printed in the test log.
func TestMoneyAudit(t *testing.T) {
	cli := dockerClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewSource(seed))
	t.Logf("seed %d", seed)

	// The portal reaches the engine through a tap that reads each exit
	// time from the engine just before the portal removes the container.
	tap, tapHost := startEngineTap(t, cli)
	mp := newMoneyPortal(t, ctx, cli, "WORKBENCH_HEARTBEAT_INTERVAL=1s", "DOCKER_HOST="+tapHost)
	pp, installID := mp.pp, mp.installID
	openStore := func() *models.Store { return mp.openStore(t, ctx) }
	var store *models.Store
	var err error

	// The engine's own record of every exit of this install's containers.
	var mu sync.Mutex
	died := map[string]time.Time{}
	evCtx, stopEvents := context.WithCancel(ctx)
	defer stopEvents()
	msgs, _ := cli.Events(evCtx, events.ListOptions{Filters: filters.NewArgs(
		filters.Arg("type", "container"), filters.Arg("event", "die"), filters.Arg("label", runtime.LabelInstall+"="+installID))})
	go func() {
		for m := range msgs {
			mu.Lock()
			died[m.Actor.ID] = time.Unix(0, m.TimeNano).UTC()
			mu.Unlock()
		}
	}()

	mp.start(t)
	p, alice := pp.http, mp.alice

	type run struct {
		name, id, how string
		flavor        string
		cid           string
		start         time.Time
	}
	hows := []string{"api stop", "api stop", "api delete", "docker kill", "docker rm -f",
		"docker kill (portal down)", "docker rm -f (portal down)", "docker stop (portal down)", "api stop (after restart)", "api delete (after restart)"}
	var runs []*run
	for i, how := range hows {
		// The mock pool has 8 GPUs: the last two runs are CPU only.
		r := &run{name: fmt.Sprintf("audit%d", i), how: how, flavor: moneyFlavor}
		if i >= 8 {
			r.flavor = "CPU small"
		}
		code, wb := p.api("POST", "/api/v1/workbenches", alice, fmt.Sprintf(`{"name":%q,"image":"fake","flavor":%q}`, r.name, r.flavor))
		if code != http.StatusAccepted {
			t.Fatalf("launch %s: %d %v", r.name, code, wb)
		}
		r.id = wb["id"].(string)
		runs = append(runs, r)
	}
	for _, r := range runs {
		waitState(t, p, alice, r.id, "running")
		c, ok := containerOf(t, cli, installID, r.id)
		if !ok || !c.running {
			t.Fatalf("%s: no running container", r.name)
		}
		r.cid = c.id
		if r.start, err = time.Parse(time.RFC3339Nano, c.startedAt); err != nil {
			t.Fatal(err)
		}
	}
	pause := func() { time.Sleep(time.Duration(500+rng.Intn(2500)) * time.Millisecond) }
	end := func(r *run) {
		t.Helper()
		pause()
		switch {
		case strings.HasPrefix(r.how, "api stop"):
			if code, body := p.api("POST", "/api/v1/workbenches/"+r.id+"/stop", alice, ""); code >= 300 {
				t.Fatalf("%s: stop %d %v", r.name, code, body)
			}
		case strings.HasPrefix(r.how, "api delete"):
			if code, body := p.api("DELETE", "/api/v1/workbenches/"+r.id, alice, ""); code >= 300 {
				t.Fatalf("%s: delete %d %v", r.name, code, body)
			}
		case strings.HasPrefix(r.how, "docker kill"):
			if err := cli.ContainerKill(ctx, r.cid, "KILL"); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(r.how, "docker rm -f"):
			if err := cli.ContainerRemove(ctx, r.cid, container.RemoveOptions{Force: true}); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(r.how, "docker stop"):
			grace := 5
			if err := cli.ContainerStop(ctx, r.cid, container.StopOptions{Timeout: &grace}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, r := range runs[:5] {
		end(r)
	}
	pause()
	if err := pp.signal(syscall.SIGKILL, 10*time.Second); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("portal exit after SIGKILL: %v", err)
	}
	for _, r := range runs[5:8] {
		end(r)
	}
	pause()
	pp.start()
	for _, r := range runs[8:] {
		end(r)
	}

	// Wait until every run's interval is closed and settled.
	store = openStore()
	defer store.Close()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		done := 0
		for _, r := range runs {
			ivs, err := store.IntervalsOf(ctx, r.id)
			if err == nil && len(ivs) == 1 && ivs[0].EndedAt != nil && ivs[0].Settled {
				done++
			}
		}
		if done == len(runs) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d runs closed and settled two minutes after the last ended", done, len(runs))
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(2 * time.Second) // more billing passes: replays must add nothing

	scheds, err := store.Schedules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	shapeOf := func(name string) pricing.Shape {
		fl, err := store.FlavorByNameOrID(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return pricing.Shape{GPUModel: fl.GPUModel, GPUCount: fl.GPUCount, CPUMilli: int64(fl.CPUMilli), MemoryMiB: fl.MemoryMiB}
	}
	u, _ := store.UserByUsername(ctx, "alice")
	lines, err := store.Statement(ctx, u.ID, time.Now().AddDate(0, 0, -2), time.Now().AddDate(0, 0, 2))
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	fmt.Fprintf(&table, "\n%-9s %-28s %12s %9s %9s %14s %14s %s\n", "run", "ended by", "engine run", "exp. s", "billed s", "expected", "charged", "")
	var bad int
	var sumExp, sumGot int64
	for _, r := range runs {
		// The exit as the engine recorded it: inspect's FinishedAt while the
		// container exists; for one the portal removed, inspect's
		// FinishedAt read by the tap just before the removal; for one
		// removed behind the portal's back (docker rm -f kills and removes
		// at once), the FinishedAt of an inspect that fell between its exit
		// and its removal (the engine's answer, as the tap saw it), else
		// its die event.
		mu.Lock()
		dieAt, ok := died[r.cid]
		mu.Unlock()
		if !ok {
			t.Fatalf("%s: the engine reported no die event", r.name)
		}
		exit, source := dieAt, "die event"
		if info, err := cli.ContainerInspect(ctx, r.cid); err == nil {
			if exit, err = time.Parse(time.RFC3339Nano, info.State.FinishedAt); err != nil {
				t.Fatal(err)
			}
			source = "inspect"
		} else if e, ok := tap.finished(r.cid); ok {
			exit, source = e.at, e.how
		} else if strings.HasPrefix(r.how, "api delete") {
			t.Fatalf("%s: the portal removed the container without the tap reading its exit first", r.name)
		}
		ivs, _ := store.IntervalsOf(ctx, r.id)
		iv := ivs[0]
		var got, gotSecs int64
		for _, l := range lines {
			if l.IntervalID != nil && *l.IntervalID == iv.ID {
				got += l.AmountMicros
				if l.Resource == pricing.CPU {
					gotSecs += l.Seconds
				}
			}
		}
		expected := func(exit time.Time) (int64, int64) {
			_, billedEnd := pricing.BilledSpan(r.start, exit, 0)
			want, err := pricing.PriceShape(shapeOf(r.flavor), r.start, billedEnd, scheds)
			if err != nil {
				t.Fatal(err)
			}
			return pricing.SumResources(want), pricing.ChargedSeconds(r.start, exit, 0)
		}
		exp, wantSecs := expected(exit)
		mark := "ok"
		switch {
		case got == exp && gotSecs == wantSecs && iv.StartedAt.Equal(r.start) && iv.EndedAt.Equal(exit):
		default:
			mark = fmt.Sprintf("MISMATCH (start Δ %s, end Δ %s)", iv.StartedAt.Sub(r.start), iv.EndedAt.Sub(exit))
			bad++
		}
		mark += " [" + source + "]"
		sumExp += exp
		sumGot += got
		fmt.Fprintf(&table, "%-9s %-28s %12s %9d %9d %14d %14d %s\n", r.name, r.how, exit.Sub(r.start).Round(time.Millisecond), wantSecs, gotSecs, exp, got, mark)
	}
	fmt.Fprintf(&table, "%-9s %-28s %12s %9s %9s %14d %14d\n", "total", "", "", "", "", sumExp, sumGot)
	t.Log(table.String())
	if bad > 0 {
		t.Fatalf("%d of %d runs charged differently from what the engine's timestamps say", bad, len(runs))
	}
}
