package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"workbench/orchestrator/runtime"
	"workbench/web"
)

// TestQueueRaceSlicesWithPreemption is the race test for shared slices on
// the real engine: two simulated GPUs shared in 2 slices (4 slices), held
// by 4 preemptible auto-resume runs; 8 interactive slice launches with
// "queue": true race in while stops arrive for whatever interactive run is
// up. Throughout, never more than 4 slices bound and none twice (API), the
// engine never runs more than 2 containers on one shared GPU; every
// interactive launch runs (preempting a preemptible run after its grace),
// every preempted run resumes, and the queue ends empty.
func TestQueueRaceSlicesWithPreemption(t *testing.T) {
	p, cli := enginePortal(t, func(c *web.Config) {
		c.Workbenches.PreemptGrace = time.Second
		c.Workbenches.DrainEvery = 200 * time.Millisecond
	})
	cullRunManager(t, p) // the drainer's timer ends the grace (the portal runs it; newPortal does not)
	ctx := context.Background()
	installID, err := p.srv.Store.InstallID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	admin := tokenFor(t, p, "admin", "admin")
	_, gpus := p.api("GET", "/api/v1/gpus", admin, "")
	items := gpus["items"].([]any)
	model := items[0].(map[string]any)["model"].(string)
	shared := map[string]bool{}
	for _, it := range items[:2] {
		uuid := it.(map[string]any)["uuid"].(string)
		if code, out := p.api("PUT", "/api/v1/gpus/"+uuid+"/shared", admin, `{"slices": 2}`); code != 200 {
			t.Fatalf("share: %d %v", code, out)
		}
		shared[uuid] = true
	}
	if code, out := p.api("POST", "/api/v1/flavors", admin, fmt.Sprintf(`{"name": "race-slice", "gpu_model": %q, "gpu_count": 1, "unit_kind": "slice", "cpu_cores": 1, "memory_gib": 1}`, model)); code != 201 {
		t.Fatalf("slice flavor: %d %v", code, out)
	}
	spot := tokenFor(t, p, "spot", "user")
	var spots []string
	for i := range 4 {
		code, out := p.api("POST", "/api/v1/workbenches", spot, fmt.Sprintf(`{"name":"spot-%d","image":"fake","flavor":"race-slice","preemptible":true,"auto_resume":true}`, i))
		if code != http.StatusAccepted || out["preemptible"] != true {
			t.Fatalf("spot %d: %d %v", i, code, out)
		}
		spots = append(spots, out["id"].(string))
	}
	for _, id := range spots {
		waitState(t, p, spot, id, "running")
	}
	const users, perUser = 4, 2
	tokens := map[string]string{}
	for u := range users {
		tokens[fmt.Sprintf("i%d", u)] = tokenFor(t, p, fmt.Sprintf("i%d", u), "user")
	}
	client := &http.Client{Timeout: 60 * time.Second}
	defer client.CloseIdleConnections()
	start := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	launched := map[string]string{}
	var errs []string
	for u := range users {
		for k := range perUser {
			user := fmt.Sprintf("i%d", u)
			wg.Go(func() {
				req, _ := http.NewRequest(http.MethodPost, p.ts.URL+"/api/v1/workbenches",
					strings.NewReader(fmt.Sprintf(`{"name":"i-%d","image":"fake","flavor":"race-slice","queue":true}`, k)))
				req.Header.Set("Authorization", "Bearer "+tokens[user])
				req.Header.Set("Content-Type", "application/json")
				<-start
				code, out, err := doJSON(client, req)
				mu.Lock()
				defer mu.Unlock()
				if err != nil || code != http.StatusAccepted {
					errs = append(errs, fmt.Sprintf("%s: %d %v %v", user, code, out, err))
					return
				}
				launched[out["id"].(string)] = user
			})
		}
	}
	close(start)
	wg.Wait()
	if len(errs) > 0 || len(launched) != users*perUser {
		t.Fatalf("%d launches accepted; errors %v", len(launched), errs)
	}
	ran := map[string]bool{}
	stopping := map[string]bool{}
	var stops sync.WaitGroup
	deadline := time.Now().Add(5 * time.Minute)
	for {
		if time.Now().After(deadline) {
			_, list := p.api("GET", "/api/v1/workbenches?all=true", admin, "")
			var lines []string
			for _, it := range list["items"].([]any) {
				wb := it.(map[string]any)
				lines = append(lines, fmt.Sprintf("%v %v %v %q %q %v", wb["name"], wb["state"], wb["priority"], wb["reason"], wb["queue_reason"], wb["preempt_at"]))
			}
			t.Fatalf("after 5 minutes: %d of %d interactive ran:\n%s", len(ran), len(launched), strings.Join(lines, "\n"))
		}
		code, list := p.api("GET", "/api/v1/workbenches?all=true", admin, "")
		if code != 200 {
			t.Fatalf("list: %d", code)
		}
		bound := map[string]string{}
		spotsRunning := 0
		for _, it := range list["items"].([]any) {
			wb := it.(map[string]any)
			id := wb["id"].(string)
			for _, u := range wb["units"].([]any) {
				unit := u.(map[string]any)
				key := fmt.Sprintf("%v/%v", unit["uuid"], unit["slice"])
				if other, dup := bound[key]; dup {
					t.Fatalf("slice %s bound to %s and %s", key, other, id)
				}
				bound[key] = id
			}
			state := wb["state"]
			if _, isInteractive := launched[id]; isInteractive {
				switch state {
				case "failed":
					t.Fatalf("%s failed: %v", id, wb["reason"])
				case "running":
					ran[id] = true
					if !stopping[id] {
						stopping[id] = true
						owner := launched[id]
						stops.Go(func() {
							if code, out := p.api("POST", "/api/v1/workbenches/"+id+"/stop", tokens[owner], ""); code != 200 {
								t.Errorf("stop %s: %d %v", id, code, out)
							}
						})
					}
				case "stopped":
					if !stopping[id] {
						t.Fatalf("%s stopped by nobody: %v", id, wb["reason"])
					}
				}
				continue
			}
			// An auto-resume victim goes from stopping straight back to
			// queued, in one transaction: "preempted" is never seen.
			switch state {
			case "failed", "stopped", "preempted":
				t.Fatalf("spot %s %s: %v (auto-resume)", id, state, wb["reason"])
			case "running":
				spotsRunning++
			}
		}
		if len(bound) > 4 {
			t.Fatalf("%d slices bound, 4 exist", len(bound))
		}
		checkEngineSlices(t, cli, installID, shared)
		if len(ran) == len(launched) && len(stopping) == len(launched) && spotsRunning == 4 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	stops.Wait()
	// The interactive launches got their slices by preemption (all 4 were
	// held), and every preempted run came back (auto-resume: a run for
	// each time it was stopped, plus the first).
	total := 0
	for _, id := range spots {
		hist, err := p.srv.Store.WorkbenchHistory(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, h := range hist {
			if h.State == "preempted" {
				n++
			}
		}
		ivs, err := p.srv.Store.IntervalsOf(ctx, id)
		if err != nil || len(ivs) != n+1 {
			t.Errorf("spot %s: preempted %d times, %d runs metered (%v)", id, n, len(ivs), err)
		}
		total += n
	}
	if total == 0 {
		t.Fatal("no preemption: the interactive launches cannot have run on 4 held slices")
	}
	if code, q := p.api("GET", "/api/v1/queue", admin, ""); code != 200 || len(q["items"].([]any)) != 0 {
		t.Fatalf("queue after the race: %d %v", code, q)
	}
}

// checkEngineSlices: no shared GPU is in more than 2 running containers of
// the install (its slices).
func checkEngineSlices(t *testing.T, cli interface {
	ContainerList(context.Context, container.ListOptions) ([]container.Summary, error)
}, installID string, shared map[string]bool) {
	t.Helper()
	cs, err := cli.ContainerList(context.Background(), container.ListOptions{
		Filters: filters.NewArgs(filters.Arg("label", runtime.LabelInstall+"="+installID), filters.Arg("status", "running"))})
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, c := range cs {
		for _, g := range strings.Split(c.Labels["workbench.gpus"], ",") {
			if shared[g] {
				per[g]++
			}
		}
	}
	for g, n := range per {
		if n > 2 {
			t.Fatalf("engine: %d running containers on shared GPU %s (2 slices)", n, g)
		}
	}
}
