package web_test

// Revocation that bites: logging out, a password reset and disabling a
// user end their sessions, API tokens and open notebook connections
// (WebSockets included) at once, on a real workbench behind the proxy.

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"workbench/models"
)

// openNotebookWS opens the fake Jupyter's echo WebSocket through the
// portal's proxy with c's session, and checks that it echoes.
func openNotebookWS(t *testing.T, p *testPortal, c *http.Client, id string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	u := "ws" + strings.TrimPrefix(p.ts.URL, "http") + "/wb/" + id + "/api/ws-echo"
	ws, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: c, HTTPHeader: http.Header{"Origin": {p.ts.URL}}})
	if err != nil {
		t.Fatalf("open the notebook WebSocket: %v", err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	if err := ws.Write(ctx, websocket.MessageText, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if _, msg, err := ws.Read(ctx); err != nil || string(msg) != "hello" {
		t.Fatalf("echo through the proxy: %q %v", msg, err)
	}
	return ws
}

// assertWSClosedWithin fails unless ws is closed by the portal within d of
// now (the revocation happened just before).
func assertWSClosedWithin(t *testing.T, ws *websocket.Conn, d time.Duration, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	_, _, err := ws.Read(ctx)
	if err == nil {
		t.Fatalf("%s: the WebSocket still delivers messages", what)
	}
	if ctx.Err() != nil {
		t.Fatalf("%s: the WebSocket was still open %v later", what, d)
	}
	t.Logf("%s: WebSocket closed %v after the revocation", what, time.Since(start))
}

func auditActions(t *testing.T, p *testPortal) []string {
	t.Helper()
	es, err := p.srv.Store.ListAudit(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Action+":"+e.Target)
	}
	return out
}

func hasAudit(list []string, want string) bool {
	for _, a := range list {
		if a == want {
			return true
		}
	}
	return false
}

func TestRevocationEndsSessionsTokensAndLiveWebSockets(t *testing.T) {
	p, _ := enginePortal(t)
	ctx := context.Background()
	aliceTok := tokenFor(t, p, "alice", "user")
	alice, _ := p.srv.Store.UserByUsername(ctx, "alice")
	code, wb := p.api("POST", "/api/v1/workbenches", aliceTok, `{"name":"nb","image":"fake","flavor":"CPU small"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, p, aliceTok, id, "running")
	admin := p.client()
	p.loginSudo(admin, "admin", adminPassword)

	// 1. Logout closes the notebook's WebSocket of that session.
	ac := p.client()
	p.login(ac, "alice", "alice-password")
	ws := openNotebookWS(t, p, ac, id)
	p.postForm(ac, "/logout", nil)
	assertWSClosedWithin(t, ws, time.Second, "logout")

	// 2. A password reset ends every session and API token of the user and
	// closes her open notebook connections.
	p.login(ac, "alice", "alice-password")
	other := p.client() // a second browser of alice's
	p.login(other, "alice", "alice-password")
	ws = openNotebookWS(t, p, ac, id)
	ws2 := openNotebookWS(t, p, other, id)
	if res := p.postForm(admin, "/admin/users/"+itoa(alice.ID)+"/password", url.Values{"password": {"alice-new-password"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("reset password: %d", res.StatusCode)
	}
	assertWSClosedWithin(t, ws, time.Second, "password reset")
	assertWSClosedWithin(t, ws2, time.Second, "password reset, second browser")
	for _, c := range []*http.Client{ac, other} {
		if res, _ := p.get(c, "/gpus"); res.StatusCode != http.StatusSeeOther {
			t.Errorf("a session from before the reset still works: %d", res.StatusCode)
		}
		if res, _ := p.get(c, "/wb/"+id+"/lab"); res.StatusCode != http.StatusNotFound {
			t.Errorf("the notebook opens with a session from before the reset: %d", res.StatusCode)
		}
	}
	if code, body := p.api("GET", "/api/v1/me", aliceTok, ""); code != http.StatusUnauthorized {
		t.Errorf("an API token from before the reset: %d %v", code, body)
	}
	if !hasAudit(auditActions(t, p), "user.revoke_access:alice") {
		t.Errorf("the revocation is not audited: %v", auditActions(t, p))
	}

	// 3. Disabling ends access the same way and stops her workbenches,
	// saying why; the workbench (and its home) stays.
	p.login(ac, "alice", "alice-new-password")
	ws = openNotebookWS(t, p, ac, id)
	if res := p.postForm(admin, "/admin/users/"+itoa(alice.ID)+"/disable", url.Values{"disabled": {"true"}, "confirmed": {"true"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("disable: %d", res.StatusCode)
	}
	assertWSClosedWithin(t, ws, time.Second, "disable")
	if res, _ := p.get(ac, "/wb/"+id+"/lab"); res.StatusCode != http.StatusNotFound {
		t.Errorf("a disabled user's session opens the notebook: %d", res.StatusCode)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		got, err := p.srv.Store.WorkbenchByID(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.State == models.StateStopped {
			if !strings.Contains(got.Reason, "disabled") {
				t.Errorf("stopped workbench's reason %q does not say the account was disabled", got.Reason)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the disabled user's workbench is still %s", got.State)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, err := p.srv.Store.WorkbenchByID(ctx, id); err != nil {
		t.Errorf("the workbench record is gone after disable: %v", err)
	}
	acts := auditActions(t, p)
	for _, want := range []string{"user.set_disabled:alice", "user.reset_password:alice", "session.logout:alice"} {
		if !hasAudit(acts, want) {
			t.Errorf("audit lacks %s: %v", want, acts)
		}
	}
	p.srv.Manager.Wait()
}
