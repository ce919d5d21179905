package web_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A workbench whose container is paused outside the portal (`docker
// pause`) is not left looking healthy while its user waits forever: the
// portal notices (on the engine's pause event), the API, its page and the
// admin list say it is paused, a request through the proxy is answered
// 503 at once (it used to hang with nothing logged), and it stays metered
// (its GPUs stay held). Unpaused, it is served again.
func TestPausedContainerIsShownAndNotWaitedOn(t *testing.T) {
	p, cli := enginePortal(t)
	ctx := context.Background()
	cullRunManager(t, p) // the server's own loop: events and reconciliation
	alice := tokenFor(t, p, "alice", "user")
	tokenFor(t, p, "root", "admin")
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"frozen","image":"fake","flavor":"CPU small"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, p, alice, id, "running")
	rec, _ := p.srv.Store.WorkbenchByID(ctx, id)
	if err := cli.ContainerPause(ctx, rec.ContainerID); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.ContainerUnpause(context.Background(), rec.ContainerID) })

	waitPaused := func(want bool) map[string]any {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			_, got := p.api("GET", "/api/v1/workbenches/"+id, alice, "")
			if _, paused := got["paused_at"]; paused == want {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatalf("paused_at present should be %v: %v", want, got)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	got := waitPaused(true)
	if got["state"] != "running" {
		t.Errorf("state %v: a paused container still runs (and holds its units)", got["state"])
	}
	if _, err := p.srv.Store.OpenIntervalOf(ctx, id); err != nil {
		t.Errorf("metering of the paused workbench: %v; it stays charged", err)
	}

	c := p.client()
	c.Timeout = 30 * time.Second // the old proxy waited for good
	p.login(c, "alice", "alice-password")
	for _, accept := range []string{"text/html", "application/json"} {
		req, _ := http.NewRequest(http.MethodGet, p.ts.URL+"/wb/"+id+"/lab", nil)
		req.Header.Set("Accept", accept)
		began := time.Now()
		res, err := c.Do(req)
		if err != nil {
			t.Fatalf("proxy (%s): %v after %s", accept, err, time.Since(began))
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "paused") || res.Header.Get("Retry-After") == "" {
			t.Errorf("proxy (%s): %d %q; want 503 saying it is paused, with Retry-After", accept, res.StatusCode, body)
		}
	}
	_, page := p.get(c, "/workbenches/"+id)
	if parseHTML(t, page).Find(`[data-testid=wb-paused]`).Length() != 1 {
		t.Errorf("workbench page says nothing of the pause")
	}
	ac := p.client()
	p.login(ac, "root", "root-password")
	_, page = p.get(ac, "/admin/workbenches")
	if parseHTML(t, page).Find(`tr[data-testid=workbench-row][data-id="`+id+`"] [data-testid=wb-paused]`).Length() != 1 {
		t.Errorf("admin list says nothing of the pause")
	}

	if err := cli.ContainerUnpause(ctx, rec.ContainerID); err != nil {
		t.Fatal(err)
	}
	waitPaused(false)
	req, _ := http.NewRequest(http.MethodGet, p.ts.URL+"/wb/"+id+"/api/status", nil)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode == http.StatusServiceUnavailable {
		t.Errorf("unpaused, the proxy still answers %d", res.StatusCode)
	}
	p.srv.Manager.Wait()
}
