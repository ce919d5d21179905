package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/coder/websocket"
)

// wbTokenGet sends GET path to the portal with the given headers and no
// cookies (a Jupyter client outside the browser).
func wbTokenGet(t *testing.T, p *testPortal, path string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, p.ts.URL+path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(b)
}

// createWBTokenForm creates a workbench token through the workbench page's
// form (session c in sudo mode) and returns the secret the page shows once.
func createWBTokenForm(t *testing.T, p *testPortal, c *http.Client, wbID, name, days string) string {
	t.Helper()
	res := p.postForm(c, "/workbenches/"+wbID+"/tokens", url.Values{"name": {name}, "expires_days": {days}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create workbench token: %d", res.StatusCode)
	}
	res, body := p.get(c, "/workbenches/"+wbID)
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("workbench page: %d %v", res.StatusCode, err)
	}
	secret := strings.TrimSpace(doc.Find(`[data-testid="new-wb-token-secret"]`).Text())
	if !strings.HasPrefix(secret, "wbk_") {
		t.Fatalf("the page shows no new token: %q", secret)
	}
	// Shown once.
	_, again := p.get(c, "/workbenches/"+wbID)
	if strings.Contains(again, secret) {
		t.Fatal("the token secret is shown a second time")
	}
	return secret
}

// TestWorkbenchTokenScope: a token made on a workbench's page opens that
// workbench through the proxy (header or ?token=, WebSocket without an
// Origin like a kernel client), never reaches the container, opens no other
// workbench (the owner's or another user's) and not the portal, and stops
// working when revoked, expired, or its user disabled.
func TestWorkbenchTokenScope(t *testing.T) {
	p, _ := enginePortal(t)
	ctx := context.Background()
	alice := tokenFor(t, p, "alice", "user")
	bob := tokenFor(t, p, "bob", "user")
	tokenFor(t, p, "root", "admin") // the admin who disables bob below
	launch := func(tok, name string) string {
		code, wb := p.api("POST", "/api/v1/workbenches", tok, `{"name":"`+name+`","image":"fake","flavor":"CPU small"}`)
		if code != http.StatusAccepted {
			t.Fatalf("launch %s: %d %v", name, code, wb)
		}
		return wb["id"].(string)
	}
	a, b, c := launch(alice, "a"), launch(alice, "b"), launch(bob, "c")
	for _, w := range []struct{ tok, id string }{{alice, a}, {alice, b}, {bob, c}} {
		waitState(t, p, w.tok, w.id, "running")
	}

	ac := p.client()
	p.login(ac, "alice", "alice-password")
	// Creating a token needs a fresh password confirmation, like an API token.
	if res := p.postForm(ac, "/workbenches/"+a+"/tokens", url.Values{"name": {"vscode"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("token without sudo: %d, want 403 (the confirm page)", res.StatusCode)
	}
	p.sudo(ac, "alice-password")
	// A forged form from another site is refused even in sudo mode.
	if res := isoPost(t, p, ac, "/workbenches/"+a+"/tokens", "https://evil.example"); res.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-origin token creation: %d, want 403", res.StatusCode)
	}
	if toks, _ := p.srv.Store.ListWorkbenchTokens(ctx, mustUserID(t, p, "alice"), a); len(toks) != 0 {
		t.Fatalf("a forged request made a token: %v", toks)
	}
	tokA := createWBTokenForm(t, p, ac, a, "vscode", "30")

	// A bad name is refused in the page, with the name kept.
	res, body := p.postFormBody(ac, "/workbenches/"+a+"/tokens", url.Values{"name": {"vscode"}, "expires_days": {"30"}})
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "already has a token with this name") {
		t.Fatalf("duplicate name: %d", res.StatusCode)
	}

	// Bob cannot make a token for alice's workbench.
	bc := p.client()
	p.loginSudo(bc, "bob", "bob-password")
	if res := p.postForm(bc, "/workbenches/"+a+"/tokens", url.Values{"name": {"steal"}}); res.StatusCode != http.StatusNotFound {
		t.Fatalf("bob makes a token for alice's workbench: %d", res.StatusCode)
	}
	code, out := p.api("POST", "/api/v1/workbenches/"+c+"/tokens", bob, `{"name":"bobs","expires_days":1}`)
	if code != http.StatusCreated {
		t.Fatalf("API token create: %d %v", code, out)
	}
	tokC := out["token"].(string)
	if su, _ := out["server_url"].(string); !strings.HasSuffix(su, "/wb/"+c+"/") {
		t.Errorf("server_url %q", su)
	}

	// The token opens its workbench, by header and by query; the
	// container sees its own Jupyter token, never the scoped one.
	for _, hdr := range []map[string]string{{"Authorization": "token " + tokA}, {"Authorization": "Bearer " + tokA}} {
		res, body := wbTokenGet(t, p, "/wb/"+a+"/api/echo-headers", hdr)
		if res.StatusCode != 200 {
			t.Fatalf("token on its workbench (%v): %d %s", hdr, res.StatusCode, body)
		}
		var seen http.Header
		if err := json.Unmarshal([]byte(body), &seen); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(body, tokA) || !strings.HasPrefix(seen.Get("Authorization"), "token ") {
			t.Fatalf("the container saw %v", seen)
		}
	}
	if res, body := wbTokenGet(t, p, "/wb/"+a+"/api/kernels?token="+tokA, nil); res.StatusCode != 200 {
		t.Fatalf("?token= on its workbench: %d %s", res.StatusCode, body)
	}
	// A kernel client's WebSocket: no Origin, no cookie.
	wsBase := "ws" + strings.TrimPrefix(p.ts.URL, "http")
	conn, wres, err := websocket.Dial(ctx, wsBase+"/wb/"+a+"/api/ws-echo?token="+tokA, nil)
	if err != nil {
		t.Fatalf("WebSocket with ?token=: %v (%d)", err, statusOf(wres))
	}
	if err := conn.Write(ctx, websocket.MessageText, []byte("ping")); err != nil {
		t.Fatal(err)
	}
	if _, msg, err := conn.Read(ctx); err != nil || string(msg) != "ping" {
		t.Fatalf("echo: %q %v", msg, err)
	}
	conn.Close(websocket.StatusNormalClosure, "")
	// Without a token the Origin-less upgrade is still refused.
	if _, wres, err := websocket.Dial(ctx, wsBase+"/wb/"+a+"/api/ws-echo", &websocket.DialOptions{HTTPClient: ac}); err == nil || statusOf(wres) != http.StatusForbidden {
		t.Fatalf("Origin-less WebSocket with a session: %v %d, want 403", err, statusOf(wres))
	}

	// Cross-workbench and cross-user: refused (403, saying the token is
	// the matter, as Jupyter answers a bad token), even with a valid
	// session of the right user beside it (the token alone decides), and
	// alike for a workbench that does not exist, so ids cannot be probed.
	// An API token is no workbench token: refused, saying which one opens
	// a workbench (whatever the id).
	for _, tc := range []struct {
		name, path, tok string
		want            int
	}{
		{"alice's token on her other workbench", "/wb/" + b + "/api/kernels", tokA, http.StatusForbidden},
		{"alice's token on bob's workbench", "/wb/" + c + "/api/kernels", tokA, http.StatusForbidden},
		{"bob's token on alice's workbench", "/wb/" + a + "/api/kernels", tokC, http.StatusForbidden},
		{"alice's token on no workbench", "/wb/nosuchworkbench/api/kernels", tokA, http.StatusForbidden},
		{"a made-up token", "/wb/" + a + "/api/kernels", "wbk_made-up", http.StatusForbidden},
		{"an API token as a workbench token", "/wb/" + a + "/api/kernels", alice, http.StatusForbidden},
		{"an API token on no workbench", "/wb/nosuchworkbench/api/kernels", alice, http.StatusForbidden},
	} {
		res, body := wbTokenGet(t, p, tc.path, map[string]string{"Authorization": "token " + tc.tok})
		if res.StatusCode != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, res.StatusCode, tc.want)
		}
		advice := "Create a new one on the workbench's page"
		if strings.HasPrefix(tc.tok, "wbt_") {
			advice = "Create a workbench token (wbk_…) on the workbench's page"
		}
		if tc.want == http.StatusForbidden && !strings.Contains(body, advice) {
			t.Errorf("%s: the refusal does not say what to do: %q", tc.name, body)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, p.ts.URL+"/wb/"+b+"/api/kernels?token="+tokA, nil)
	if res, err := ac.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Errorf("alice's session with her token for A on B: %v %v, want 403", err, statusOf(res))
	}
	if _, wres, err := websocket.Dial(ctx, wsBase+"/wb/"+b+"/api/ws-echo?token="+tokA, nil); err == nil || statusOf(wres) != http.StatusForbidden {
		t.Errorf("WebSocket on B with A's token: %v %d", err, statusOf(wres))
	}
	// The token opens nothing of the portal.
	if code, _ := p.api("GET", "/api/v1/me", tokA, ""); code != http.StatusUnauthorized {
		t.Errorf("workbench token on the portal API: %d, want 401", code)
	}

	// Revoked: refused at once, and the open WebSocket is closed.
	conn, _, err = websocket.Dial(ctx, wsBase+"/wb/"+a+"/api/ws-echo", &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"token " + tokA}}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	code, list := p.api("GET", "/api/v1/workbenches/"+a+"/tokens", alice, "")
	items, _ := list["items"].([]any)
	if code != 200 || len(items) != 1 {
		t.Fatalf("list tokens: %d %v", code, list)
	}
	tid := int64(items[0].(map[string]any)["id"].(float64))
	if res := p.postForm(ac, "/workbenches/"+a+"/tokens/"+itoa(tid)+"/revoke", nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke: %d", res.StatusCode)
	}
	if res, _ := wbTokenGet(t, p, "/wb/"+a+"/api/kernels", map[string]string{"Authorization": "token " + tokA}); res.StatusCode != http.StatusForbidden {
		t.Errorf("revoked token: %d, want 403", res.StatusCode)
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, _, err := conn.Read(rctx); err == nil || rctx.Err() != nil {
		t.Errorf("the WebSocket opened with the revoked token stays open: %v", err)
	}
	_, page := p.get(ac, "/workbenches/"+a)
	if !strings.Contains(page, "revoked") {
		t.Error("the workbench page does not show the token as revoked")
	}

	// Expired: bob's one-day token, two days on.
	if res, _ := wbTokenGet(t, p, "/wb/"+c+"/api/kernels", map[string]string{"Authorization": "token " + tokC}); res.StatusCode != 200 {
		t.Fatalf("bob's token before expiry: %d", res.StatusCode)
	}
	code, out = p.api("POST", "/api/v1/workbenches/"+c+"/tokens", bob, `{"name":"short","expires_days":1}`)
	if code != http.StatusCreated {
		t.Fatalf("second token: %d %v", code, out)
	}
	tokC2 := out["token"].(string)
	p.srv.Store.SetClock(func() time.Time { return time.Now().Add(48 * time.Hour) })
	if res, _ := wbTokenGet(t, p, "/wb/"+c+"/api/kernels", map[string]string{"Authorization": "token " + tokC2}); res.StatusCode != http.StatusForbidden {
		t.Errorf("expired token: %d, want 403", res.StatusCode)
	}
	p.srv.Store.SetClock(time.Now)

	// Disabled user: every token of theirs ends.
	ad := p.client()
	p.loginSudo(ad, "root", "root-password")
	code, made := p.api("POST", "/api/v1/workbenches/"+c+"/tokens", bob, `{"name":"third"}`)
	if code != http.StatusCreated {
		t.Fatalf("third token: %d %v", code, made)
	}
	tokC3 := made["token"].(string)
	bobUser, err := p.srv.Store.UserByUsername(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if res := p.postForm(ad, "/admin/users/"+itoa(bobUser.ID)+"/disable", url.Values{"disabled": {"true"}, "confirmed": {"true"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("disable bob: %d", res.StatusCode)
	}
	if res, _ := wbTokenGet(t, p, "/wb/"+c+"/api/kernels", map[string]string{"Authorization": "token " + tokC3}); res.StatusCode != http.StatusForbidden {
		t.Errorf("a disabled user's token: %d, want 403", res.StatusCode)
	}

	// Deleted: the token of a deleted workbench is refused as a revoked
	// one, also right after the deletion, while the proxy still trusts its
	// last lookup (it answered 404 "no such workbench").
	code, made = p.api("POST", "/api/v1/workbenches/"+b+"/tokens", alice, `{"name":"gone"}`)
	if code != http.StatusCreated {
		t.Fatalf("token for b: %d %v", code, made)
	}
	tokB := made["token"].(string)
	if res, body := wbTokenGet(t, p, "/wb/"+b+"/api/kernels", map[string]string{"Authorization": "token " + tokB}); res.StatusCode != 200 {
		t.Fatalf("b's token before the deletion: %d %s", res.StatusCode, body)
	}
	if code, out := p.api("DELETE", "/api/v1/workbenches/"+b, alice, ""); code != http.StatusNoContent {
		t.Fatalf("delete b: %d %v", code, out)
	}
	if res, body := wbTokenGet(t, p, "/wb/"+b+"/api/kernels", map[string]string{"Authorization": "token " + tokB}); res.StatusCode != http.StatusForbidden {
		t.Errorf("the token of a deleted workbench: %d %q, want 403", res.StatusCode, body)
	}
}
