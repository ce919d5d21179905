package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

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
	fl := &models.Flavor{Name: "CPU two seconds", CPUMilli: 1000, MemoryMiB: 1 * 1024, ShmMiB: 64, MaxRuntimeS: 2, Enabled: true}
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

// TestIdleCullingSeesJupyter: the culler counts what Jupyter itself saw
// (here: API requests that bypass the proxy, as a terminal command's output
// or a kernel's messages would), and it does not count the keep-alive pings
// Jupyter sends on an open kernel WebSocket: a forgotten tab does not keep
// a workbench, and its GPUs, for ever.
func TestIdleCullingSeesJupyter(t *testing.T) {
	p, _ := enginePortal(t, cullTimers, func(c *web.Config) { c.ActivityEvery = 100 * time.Millisecond })
	cullRunManager(t, p)
	ctx := context.Background()
	alice := tokenFor(t, p, "alice", "user")
	ac := p.client()
	p.login(ac, "alice", "alice-password")

	t.Run("activity only Jupyter saw keeps it running", func(t *testing.T) {
		id := cullLaunch(t, p, alice, "unseen", "CPU small", 2)
		waitState(t, p, alice, id, "running")
		wb, err := p.srv.Store.WorkbenchByID(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		hc := &http.Client{Timeout: 5 * time.Second}
		var last time.Time
		for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(300 * time.Millisecond) {
			req, _ := http.NewRequest(http.MethodGet, "http://"+wb.Endpoint+"/wb/"+id+"/api/kernels", nil)
			req.Header.Set("Authorization", "token "+wb.Token)
			res, err := hc.Do(req)
			if err != nil {
				_, got := p.api("GET", "/api/v1/workbenches/"+id, alice, "")
				t.Fatalf("Jupyter in use gone (state %v, reason %v): %v", got["state"], got["reason"], err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Fatalf("straight to Jupyter: %d", res.StatusCode)
			}
			last = time.Now()
		}
		if code, got := p.api("GET", "/api/v1/workbenches/"+id, alice, ""); code != 200 || got["state"] != "running" {
			t.Fatalf("workbench Jupyter saw in use, after 3s: %d state %v reason %v", code, got["state"], got["reason"])
		}
		stopped := cullWaitStopped(t, p, alice, id, 15*time.Second, nil)
		if quiet := time.Since(last); quiet < 1500*time.Millisecond {
			t.Errorf("culled %s after Jupyter's last activity, before the 2s idle timeout", quiet)
		}
		if r, _ := stopped["reason"].(string); !strings.Contains(r, "idle") {
			t.Errorf("reason %q does not mention idle", r)
		}
	})

	t.Run("an open kernel WebSocket's pings do not keep it running", func(t *testing.T) {
		img := fakeCatalogImage("fake-ping", fakeJupyterImage(t))
		img.StartCommand += " --ws-ping-interval=100ms"
		p.addImage(img)
		code, wb := p.api("POST", "/api/v1/workbenches", alice,
			`{"name":"open-tab","image":"fake-ping","flavor":"CPU small","idle_timeout_seconds":2}`)
		if code != http.StatusAccepted {
			t.Fatalf("launch: %d %v", code, wb)
		}
		id := wb["id"].(string)
		waitState(t, p, alice, id, "running")

		// A notebook tab: a kernel, and its channels WebSocket.
		req, _ := http.NewRequest(http.MethodPost, p.ts.URL+"/wb/"+id+"/api/kernels", strings.NewReader(`{"name":"python3"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", p.ts.URL)
		res, err := ac.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var kernel struct{ ID string }
		err = json.NewDecoder(res.Body).Decode(&kernel)
		res.Body.Close()
		if res.StatusCode != http.StatusCreated || err != nil {
			t.Fatalf("start a kernel through the proxy: %d %v", res.StatusCode, err)
		}
		wsCtx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		conn, _, err := websocket.Dial(wsCtx, "ws"+strings.TrimPrefix(p.ts.URL, "http")+"/wb/"+id+"/api/kernels/"+kernel.ID+"/channels",
			&websocket.DialOptions{HTTPClient: ac, HTTPHeader: http.Header{"Origin": {p.ts.URL}}})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.CloseNow()
		replies := make(chan struct{}, 100)
		go func() { // reading is also what answers Jupyter's pings
			for {
				_, data, err := conn.Read(wsCtx)
				if err != nil {
					return
				}
				if strings.Contains(string(data), `"execute_reply"`) {
					replies <- struct{}{}
				}
			}
		}()

		// Running cells keeps it: 3 s of messages, past the idle timeout.
		var last time.Time
		for i := range 10 {
			msg := `{"header":{"msg_id":"m` + itoa(int64(i)) + `","msg_type":"execute_request","session":"s"},` +
				`"parent_header":{},"metadata":{},"content":{"code":"1+1"},"channel":"shell","buffers":[]}`
			if err := conn.Write(wsCtx, websocket.MessageText, []byte(msg)); err != nil {
				t.Fatal(err)
			}
			select {
			case <-replies:
			case <-wsCtx.Done():
				t.Fatal("no execute_reply through the proxy")
			}
			last = time.Now()
			time.Sleep(300 * time.Millisecond)
		}
		if code, got := p.api("GET", "/api/v1/workbenches/"+id, alice, ""); code != 200 || got["state"] != "running" {
			t.Fatalf("workbench running cells, after 3s: %d state %v reason %v", code, got["state"], got["reason"])
		}
		// Then the tab stays open, the kernel idle: only pings and pongs
		// flow (every 100 ms), and the workbench is culled.
		stopped := cullWaitStopped(t, p, alice, id, 15*time.Second, nil)
		if quiet := time.Since(last); quiet < 1500*time.Millisecond {
			t.Errorf("culled %s after the last message, before the 2s idle timeout", quiet)
		}
		if r, _ := stopped["reason"].(string); !strings.Contains(r, "idle") {
			t.Errorf("reason %q does not mention idle", r)
		}
	})
}
