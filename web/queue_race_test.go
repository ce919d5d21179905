package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"workbench/orchestrator/runtime"
)

// TestQueueRaceNeverOverbindsAndEveryLaunchRuns races 40 one-GPU launches
// with "queue": true against the 8 simulated GPUs of a DGX H100 while stops
// arrive for whatever runs. Throughout, the engine never runs more than 8
// GPU containers nor gives one GPU to two of them, and the database never
// binds a GPU twice; in the end every launch has run (none expired: the
// maximum wait is long) and the queue is empty.
func TestQueueRaceNeverOverbindsAndEveryLaunchRuns(t *testing.T) {
	p, cli := enginePortal(t)
	ctx := context.Background()
	installID, err := p.srv.Store.InstallID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const users, perUser, gpus = 4, 10, 8
	admin := tokenFor(t, p, "admin", "admin")
	tokens := map[string]string{}
	for u := range users {
		name := fmt.Sprintf("q%d", u)
		tokens[name] = tokenFor(t, p, name, "user")
	}
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: users * perUser}}
	defer client.CloseIdleConnections()
	start := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	launched := map[string]string{} // id → owner
	var launchErrs []string
	for u := range users {
		for k := range perUser {
			user := fmt.Sprintf("q%d", u)
			wg.Go(func() {
				body := fmt.Sprintf(`{"name":"q-%d","image":"fake","flavor":"1x H100 80GB HBM3","queue":true}`, k)
				req, _ := http.NewRequest(http.MethodPost, p.ts.URL+"/api/v1/workbenches", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+tokens[user])
				req.Header.Set("Content-Type", "application/json")
				<-start
				code, out, err := doJSON(client, req)
				mu.Lock()
				defer mu.Unlock()
				if err != nil || code != http.StatusAccepted {
					launchErrs = append(launchErrs, fmt.Sprintf("%s: %d %v %v", user, code, out, err))
					return
				}
				if s := out["state"]; s == "failed" || s == "stopped" {
					launchErrs = append(launchErrs, fmt.Sprintf("%s: accepted in state %v", user, s))
				}
				launched[out["id"].(string)] = user
			})
		}
	}
	close(start)
	wg.Wait()
	if len(launchErrs) > 0 || len(launched) != users*perUser {
		t.Fatalf("%d launches accepted; errors: %v", len(launched), launchErrs)
	}

	// Stop what runs, concurrently, until every launch has run, checking
	// the invariants at every turn.
	ran := map[string]bool{}
	stopping := map[string]bool{}
	var stops sync.WaitGroup
	deadline := time.Now().Add(10 * time.Minute)
	for len(ran) < len(launched) || len(stopping) < len(launched) {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 minutes %d of %d have run", len(ran), len(launched))
		}
		code, list := p.api("GET", "/api/v1/workbenches?all=true", admin, "")
		if code != 200 {
			t.Fatalf("list: %d %v", code, list)
		}
		bound := map[string]string{}
		for _, it := range list["items"].([]any) {
			wb := it.(map[string]any)
			id := wb["id"].(string)
			for _, g := range wb["gpus"].([]any) {
				if other, dup := bound[g.(string)]; dup {
					t.Fatalf("GPU %s bound to %s and %s", g, other, id)
				}
				bound[g.(string)] = id
			}
			switch wb["state"] {
			case "failed":
				t.Fatalf("%s failed: %v", id, wb["reason"])
			case "stopped":
				if !stopping[id] {
					t.Fatalf("%s stopped by nobody: %v (expired?)", id, wb["reason"])
				}
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
			case "queued":
				if pos, _ := wb["queue_position"].(float64); pos < 1 {
					t.Errorf("%s queued at position %v", id, wb["queue_position"])
				}
			}
		}
		if len(bound) > gpus {
			t.Fatalf("%d GPUs bound, %d exist", len(bound), gpus)
		}
		checkEngineGPUs(t, cli, installID, gpus)
		time.Sleep(100 * time.Millisecond)
	}
	stops.Wait()
	code, q := p.api("GET", "/api/v1/queue", admin, "")
	if code != 200 || len(q["items"].([]any)) != 0 {
		t.Fatalf("queue after the race: %d %v", code, q)
	}
}

// checkEngineGPUs: the engine's running containers of the install hold at
// most max GPUs between them, none twice.
func checkEngineGPUs(t *testing.T, cli interface {
	ContainerList(context.Context, container.ListOptions) ([]container.Summary, error)
}, installID string, max int) {
	t.Helper()
	cs, err := cli.ContainerList(context.Background(), container.ListOptions{
		Filters: filters.NewArgs(filters.Arg("label", runtime.LabelInstall+"="+installID), filters.Arg("status", "running"))})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, c := range cs {
		for _, g := range strings.Split(c.Labels["workbench.gpus"], ",") {
			if g == "" {
				continue
			}
			if other, dup := seen[g]; dup {
				t.Fatalf("engine: GPU %s in two running containers (%s, %s)", g, other, c.ID)
			}
			seen[g] = c.ID
		}
	}
	if len(seen) > max {
		t.Fatalf("engine: %d GPUs in running containers, %d exist", len(seen), max)
	}
}

// doJSON sends req and decodes a JSON answer.
func doJSON(client *http.Client, req *http.Request) (int, map[string]any, error) {
	res, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return res.StatusCode, nil, fmt.Errorf("not JSON (%d): %w", res.StatusCode, err)
	}
	return res.StatusCode, out, nil
}
