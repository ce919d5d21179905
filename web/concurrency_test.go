package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"workbench/orchestrator/runtime"
)

// launchResult is one racing launch's answer.
type launchResult struct {
	user, name string
	code       int
	body       map[string]any
	err        error
}

// TestConcurrentLaunchesNeverShareAGPU races 20 one-GPU launches against the
// 8 simulated GPUs of a DGX H100 and checks the outcome in the API and, above
// all, in the engine: what the containers were really given.
func TestConcurrentLaunchesNeverShareAGPU(t *testing.T) {
	p, cli := enginePortal(t)
	ctx := context.Background()
	installID, err := p.srv.Store.InstallID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const users, perUser, gpus = 4, 5, 8
	tokens := map[string]string{}
	for u := range users {
		name := fmt.Sprintf("racer%d", u)
		tokens[name] = tokenFor(t, p, name, "user")
	}

	// All requests are built in advance and released together by closing
	// start, so they reach the allocation transaction at the same moment.
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: users * perUser}}
	defer client.CloseIdleConnections()
	start := make(chan struct{})
	results := make([]launchResult, users*perUser)
	var wg sync.WaitGroup
	for u := range users {
		for k := range perUser {
			i := u*perUser + k
			user := fmt.Sprintf("racer%d", u)
			r := &results[i]
			r.user, r.name = user, fmt.Sprintf("race-%d", k)
			wg.Go(func() {
				body := `{"name":"` + r.name + `","image":"fake","flavor":"1x H100 80GB HBM3"}`
				req, _ := http.NewRequest(http.MethodPost, p.ts.URL+"/api/v1/workbenches", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+tokens[user])
				req.Header.Set("Content-Type", "application/json")
				<-start
				res, err := client.Do(req)
				if err != nil {
					r.err = err
					return
				}
				defer res.Body.Close()
				r.code = res.StatusCode
				b, _ := io.ReadAll(res.Body)
				if err := json.Unmarshal(b, &r.body); err != nil {
					r.err = fmt.Errorf("not JSON (%d): %s", res.StatusCode, b)
				}
			})
		}
	}
	began := time.Now()
	close(start)
	wg.Wait()
	t.Logf("20 racing launches answered in %s", time.Since(began).Round(time.Millisecond))

	// owner of each accepted workbench, by id
	accepted := map[string]string{}
	refused := 0
	for _, r := range results {
		switch {
		case r.err != nil:
			t.Fatalf("%s/%s: %v", r.user, r.name, r.err)
		case r.code == http.StatusAccepted:
			accepted[r.body["id"].(string)] = r.user
		case r.code == http.StatusConflict:
			refused++
			e, _ := r.body["error"].(map[string]any)
			msg, _ := e["message"].(string)
			// The refusal names the model, that none is free, and what is.
			if errCode(r.body) != "no_capacity" || !strings.Contains(msg, "H100") || !strings.Contains(msg, "0 free") ||
				!strings.Contains(msg, "no GPU is free right now") {
				t.Errorf("%s/%s: refusal %v, want no_capacity naming what is free", r.user, r.name, r.body)
			}
		default:
			t.Errorf("%s/%s: status %d %v, want 202 or 409", r.user, r.name, r.code, r.body)
		}
	}
	if len(accepted) != gpus || refused != users*perUser-gpus {
		t.Fatalf("%d accepted and %d refused, want %d and %d", len(accepted), refused, gpus, users*perUser-gpus)
	}

	// GPUs the API says each workbench holds.
	apiGPU := map[string]string{}
	for id, owner := range accepted {
		wb := waitState(t, p, tokens[owner], id, "running")
		g, _ := wb["gpus"].([]any)
		if len(g) != 1 {
			t.Fatalf("workbench %s holds GPUs %v, want one", id, wb["gpus"])
		}
		apiGPU[id] = g[0].(string)
	}
	t.Logf("all %d running %s after the race", gpus, time.Since(began).Round(time.Millisecond))

	// The inventory, and who holds what, as GET /api/v1/gpus reports it.
	// An admin reads every holder (a user only their own).
	code, inv := p.api("GET", "/api/v1/gpus", tokenFor(t, p, "root", "admin"), "")
	if code != 200 {
		t.Fatalf("GET /api/v1/gpus: %d %v", code, inv)
	}
	items, _ := inv["items"].([]any)
	if len(items) != gpus {
		t.Fatalf("inventory has %d GPUs, want %d", len(items), gpus)
	}
	inventory := map[string]map[string]any{}
	for _, it := range items {
		g := it.(map[string]any)
		inventory[g["uuid"].(string)] = g
	}

	// The engine's truth: what each container was created with.
	cs, err := cli.ContainerList(ctx, container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", runtime.LabelInstall+"="+installID))})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != gpus {
		t.Fatalf("engine has %d containers of this install, want %d", len(cs), gpus)
	}
	seen := map[string]string{} // GPU UUID → workbench id
	for _, c := range cs {
		info, err := cli.ContainerInspect(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		id := info.Config.Labels[runtime.LabelID]
		if _, ok := accepted[id]; !ok {
			t.Fatalf("container %s has workbench id %q, not one of the accepted launches", info.Name, id)
		}
		if !info.State.Running {
			t.Errorf("container %s of %s is %s, want running", info.Name, id, info.State.Status)
		}
		label := info.Config.Labels["workbench.gpus"]
		envGPUs := ""
		for _, kv := range info.Config.Env {
			if v, ok := strings.CutPrefix(kv, runtime.EnvSimulatedGPUs+"="); ok {
				envGPUs = v
			}
		}
		if label == "" || strings.Contains(label, ",") || envGPUs != label {
			t.Fatalf("container of %s: label workbench.gpus=%q, env %s=%q; want the same single UUID", id, label, runtime.EnvSimulatedGPUs, envGPUs)
		}
		if label != apiGPU[id] {
			t.Errorf("container of %s has GPU %s, the API says %s", id, label, apiGPU[id])
		}
		if other, dup := seen[label]; dup {
			t.Fatalf("GPU %s given to both %s and %s", label, other, id)
		}
		seen[label] = id
		g, ok := inventory[label]
		if !ok {
			t.Fatalf("container of %s has GPU %s, not in the inventory", id, label)
		}
		if g["state"] != "in_use" || g["workbench_id"] != id {
			t.Errorf("GET /api/v1/gpus: %s is %v held by %v, want in_use by %s", label, g["state"], g["workbench_id"], id)
		}
	}
	if len(seen) != gpus {
		t.Fatalf("%d distinct GPUs in the engine, want %d", len(seen), gpus)
	}
}
