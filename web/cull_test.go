package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"workbench/models"
	"workbench/web"
)

// cullTimers make the culler look every 500 ms and let a launch ask for a
// 2 s idle timeout, so culling is observable within seconds.
func cullTimers(c *web.Config) {
	c.Workbenches.CullEvery = 500 * time.Millisecond
	c.Workbenches.MinIdle = time.Second
}

// cullRunManager starts the manager's background loop (culling,
// reconciliation, activity flushing): newPortal serves only the handler,
// and Server.Serve, which would start it, is not used by the tests. The
// loop is stopped, and waited for, before the portal's store closes.
func cullRunManager(t *testing.T, p *testPortal) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.srv.Manager.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

// TestIdleCulling: a workbench nobody uses is stopped after its idle
// timeout with a reason saying so, and its GPU is freed; proxy traffic
// keeps one alive past its timeout, and it is culled once traffic stops.
func TestIdleCulling(t *testing.T) {
	p, _ := enginePortal(t, cullTimers)
	cullRunManager(t, p)
	ctx := context.Background()
	alice := tokenFor(t, p, "alice", "user")
	ac := p.client()
	p.login(ac, "alice", "alice-password")

	t.Run("idle", func(t *testing.T) {
		id := cullLaunch(t, p, alice, "idle", "1x H100 80GB HBM3", 2)
		waitState(t, p, alice, id, "running")
		running := time.Now()
		wb := cullWaitStopped(t, p, alice, id, 15*time.Second, nil)
		took := time.Since(running)
		t.Logf("culled %s after running (idle timeout 2s, cull every 500ms): %q", took.Round(10*time.Millisecond), wb["reason"])
		// Running was seen up to one poll after started_at; culling before
		// ~2 s would mean the timeout is not honoured.
		if took < 1500*time.Millisecond {
			t.Errorf("culled after %s, before the 2s idle timeout", took)
		}
		if r, _ := wb["reason"].(string); !strings.Contains(r, "idle") {
			t.Errorf("reason %q does not mention idle", r)
		}
		if gpus, _ := wb["gpus"].([]any); len(gpus) != 0 {
			t.Errorf("GPUs still bound after culling: %v", gpus)
		}
		alloc, err := p.srv.Store.GPUAllocations(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for uuid, owner := range alloc {
			if owner == id {
				t.Errorf("GPU %s still allocated to the culled workbench", uuid)
			}
		}
	})

	t.Run("activity keeps it running", func(t *testing.T) {
		id := cullLaunch(t, p, alice, "busy", "CPU small", 2)
		waitState(t, p, alice, id, "running")
		// 3 s of traffic through the proxy: longer than the idle timeout,
		// so only recorded activity can explain it still running.
		var last time.Time
		for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(300 * time.Millisecond) {
			if res, body := p.get(ac, "/wb/"+id+"/api/status"); res.StatusCode != http.StatusOK {
				t.Fatalf("status through the proxy while active: %d %q", res.StatusCode, body)
			}
			last = time.Now()
		}
		if code, wb := p.api("GET", "/api/v1/workbenches/"+id, alice, ""); code != 200 || wb["state"] != "running" {
			t.Fatalf("active workbench after 3s: %d state %v reason %v", code, wb["state"], wb["reason"])
		}
		wb := cullWaitStopped(t, p, alice, id, 15*time.Second, nil)
		quiet := time.Since(last)
		t.Logf("culled %s after the last request: %q", quiet.Round(10*time.Millisecond), wb["reason"])
		if quiet < 1500*time.Millisecond {
			t.Errorf("culled %s after the last request, before the 2s idle timeout", quiet)
		}
		if r, _ := wb["reason"].(string); !strings.Contains(r, "idle") {
			t.Errorf("reason %q does not mention idle", r)
		}
	})
}

// TestMaxRuntime: a flavor's maximum runtime stops a workbench even while
// it is in use and its idle timeout is far away.
func TestMaxRuntime(t *testing.T) {
	p, _ := enginePortal(t, cullTimers)
	cullRunManager(t, p)
	// The flavor API has no max-runtime field yet, so the limit is set
	// in the store.
	fl := &models.Flavor{Name: "CPU two seconds", CPUCores: 1, MemoryGiB: 1, ShmMiB: 64, MaxRuntimeS: 2, Enabled: true}
	if err := p.srv.Store.CreateFlavor(context.Background(), fl); err != nil {
		t.Fatal(err)
	}
	alice := tokenFor(t, p, "alice", "user")
	ac := p.client()
	p.login(ac, "alice", "alice-password")
	id := cullLaunch(t, p, alice, "short", fl.Name, 3600)
	waitState(t, p, alice, id, "running")
	running := time.Now()
	// Keep it busy so idle culling cannot be what stops it.
	wb := cullWaitStopped(t, p, alice, id, 15*time.Second, func() { p.get(ac, "/wb/"+id+"/api/status") })
	took := time.Since(running)
	t.Logf("stopped %s after running: %q", took.Round(10*time.Millisecond), wb["reason"])
	if took < 1500*time.Millisecond {
		t.Errorf("stopped after %s, before the 2s maximum runtime", took)
	}
	if r, _ := wb["reason"].(string); !strings.Contains(r, "maximum runtime") {
		t.Errorf("reason %q does not mention the maximum runtime", r)
	}
}

func cullLaunch(t *testing.T, p *testPortal, token, name, flavor string, idleS int) string {
	t.Helper()
	code, wb := p.api("POST", "/api/v1/workbenches", token,
		`{"name":"`+name+`","image":"fake","flavor":"`+flavor+`","idle_timeout_seconds":`+itoa(int64(idleS))+`}`)
	if code != http.StatusAccepted {
		t.Fatalf("launch %s: %d %v", name, code, wb)
	}
	return wb["id"].(string)
}

// cullWaitStopped polls until the workbench is stopped, failing after
// within; tick (optional) runs between polls.
func cullWaitStopped(t *testing.T, p *testPortal, token, id string, within time.Duration, tick func()) map[string]any {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		code, wb := p.api("GET", "/api/v1/workbenches/"+id, token, "")
		if code != 200 {
			t.Fatalf("get workbench: %d %v", code, wb)
		}
		switch wb["state"] {
		case "stopped":
			return wb
		case "running", "stopping":
		default:
			t.Fatalf("workbench went %v (%v) instead of being stopped", wb["state"], wb["reason"])
		}
		if time.Now().After(deadline) {
			t.Fatalf("not stopped within %s: state %v", within, wb["state"])
		}
		if tick != nil {
			tick()
		}
		time.Sleep(200 * time.Millisecond)
	}
}
