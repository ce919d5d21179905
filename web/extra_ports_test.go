package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/coder/websocket"

	"workbench/internal/testsupport/testimages"
	"workbench/models"
	"workbench/web"
)

// TestExtraPortThroughProxy opens an image's extra HTTP port (an app like
// TensorBoard on 6006) through /wb/{id}/port/6006/ on the real engine:
// the owner reaches it with the path prefix removed and without the
// portal's cookie or Jupyter's token; other users, undeclared ports and
// cross-origin writes are refused; a WebSocket (what Gradio and Streamlit
// run on) works for the owner only and same-origin only; the workbench
// page has the button.
func TestExtraPortThroughProxy(t *testing.T) {
	p, _ := enginePortal(t, func(c *web.Config) { c.SSHAddr = "127.0.0.1:2222" })
	ctx := context.Background()
	fake, err := p.srv.Store.ImageByNameOrID(ctx, "fake")
	if err != nil {
		t.Fatal(err)
	}
	img := &models.Image{Name: "fake-ports", Image: fake.Image, StartCommand: testimages.FakeJupyterStartCommand + " --extra-port=6006",
		RunAsUser: "1000", HomePath: testimages.FakeJupyterHome, Enabled: true, ExtraPorts: []int{6006}}
	if err := p.srv.Store.CreateImage(ctx, img); err != nil {
		t.Fatal(err)
	}
	alice := tokenFor(t, p, "alice", "user")
	tokenFor(t, p, "bob", "user")
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"tb","image":"fake-ports","flavor":"CPU small"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, p, alice, id, "running")

	ac := p.client()
	p.login(ac, "alice", "alice-password")
	res, body := p.get(ac, "/wb/"+id+"/port/6006/data/run1?tag=loss")
	var got map[string]any
	if res.StatusCode != 200 || json.Unmarshal([]byte(body), &got) != nil || got["app"] != "extra-port" {
		t.Fatalf("owner GET port 6006: %d %s", res.StatusCode, body)
	}
	if got["path"] != "/data/run1" || got["query"] != "tag=loss" {
		t.Fatalf("the app saw %v %v; want /data/run1 tag=loss", got["path"], got["query"])
	}
	if got["authorization"] != "" || strings.Contains(got["cookie"].(string), "workbench_session") {
		t.Fatalf("credentials leaked to the app: authorization %q cookie %q", got["authorization"], got["cookie"])
	}
	if sc := res.Header.Values("Set-Cookie"); len(sc) != 0 {
		t.Fatalf("the app's Set-Cookie reached the browser: %v", sc)
	}

	// Same-origin writes pass; cross-origin ones never reach the app.
	if res, _ := p.postFormBody(ac, "/wb/"+id+"/port/6006/api", nil); res.StatusCode != 200 {
		t.Fatalf("same-origin POST: %d", res.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodPost, p.ts.URL+"/wb/"+id+"/port/6006/api", strings.NewReader("x=1"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if res, err := ac.Do(req); err != nil || res.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-origin POST: %v %v", res.StatusCode, err)
	}

	// A port the image does not declare, and Jupyter's own, are not reachable this way.
	for _, port := range []string{"7000", "8888"} {
		if res, _ := p.get(ac, "/wb/"+id+"/port/"+port+"/"); res.StatusCode != 404 {
			t.Fatalf("undeclared port %s: %d; want 404", port, res.StatusCode)
		}
	}
	// Another user, and nobody, get 404.
	bc := p.client()
	p.login(bc, "bob", "bob-password")
	if res, body := p.get(bc, "/wb/"+id+"/port/6006/"); res.StatusCode != 404 || strings.Contains(body, "extra-port") {
		t.Fatalf("bob: %d %s", res.StatusCode, body)
	}
	if res, body := p.get(p.client(), "/wb/"+id+"/port/6006/"); res.StatusCode == 200 || strings.Contains(body, "extra-port") {
		t.Fatalf("no session: %d %s", res.StatusCode, body)
	}

	checkExtraPortWebSocket(t, p, ac, bc, id)

	// The workbench page lists the port as a button.
	res, page := p.get(ac, "/workbenches/"+id)
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(page))
	if res.StatusCode != 200 || err != nil {
		t.Fatalf("page: %d %v", res.StatusCode, err)
	}
	if href, _ := doc.Find(`[data-testid="port-button"]`).Attr("href"); href != "/wb/"+id+"/port/6006/" {
		t.Fatalf("port button: %q", href)
	}
	if cmd := doc.Find(`[data-testid="ssh-command"]`).Text(); cmd != "ssh -p 2222 tb@127.0.0.1" {
		t.Fatalf("ssh command on the page: %q", cmd)
	}

	// Once stopped, the port is gone too.
	if code, _ := p.api("POST", "/api/v1/workbenches/"+id+"/stop", alice, ""); code != 202 && code != 200 {
		t.Fatalf("stop: %d", code)
	}
	waitState(t, p, alice, id, "stopped")
	req, _ = http.NewRequest(http.MethodGet, p.ts.URL+"/wb/"+id+"/port/6006/", nil)
	req.Header.Set("Accept", "application/json")
	if res, err := ac.Do(req); err != nil || res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("stopped: %v %v", res.StatusCode, err)
	} else {
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
}

// checkExtraPortWebSocket opens the fake app's WebSocket on port 6006
// through the proxy: the owner's same-origin one echoes (and the app sees
// neither the portal's cookie nor a token); another user's, a cross-origin
// one and one without a session are refused before reaching the app.
func checkExtraPortWebSocket(t *testing.T, p *testPortal, owner, other *http.Client, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	u := "ws" + strings.TrimPrefix(p.ts.URL, "http") + "/wb/" + id + "/port/6006/ws"
	dial := func(c *http.Client, origin string) (*websocket.Conn, *http.Response, error) {
		return websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: c, HTTPHeader: http.Header{"Origin": {origin}}})
	}
	ws, _, err := dial(owner, p.ts.URL)
	if err != nil {
		t.Fatalf("owner's WebSocket on port 6006: %v", err)
	}
	defer ws.CloseNow()
	_, hello, err := ws.Read(ctx)
	var got map[string]any
	if err != nil || json.Unmarshal(hello, &got) != nil || got["app"] != "extra-port-ws" || got["path"] != "/ws" {
		t.Fatalf("the app's first WebSocket message: %q %v", hello, err)
	}
	if got["authorization"] != "" || strings.Contains(got["cookie"].(string), "workbench_session") {
		t.Fatalf("credentials leaked to the app's WebSocket: authorization %q cookie %q", got["authorization"], got["cookie"])
	}
	for _, m := range []string{"hello", "second message"} {
		if err := ws.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
			t.Fatal(err)
		}
		if _, echo, err := ws.Read(ctx); err != nil || string(echo) != m {
			t.Fatalf("echo through the extra port's proxy: %q %v", echo, err)
		}
	}
	ws.Close(websocket.StatusNormalClosure, "")

	for _, tc := range []struct {
		what   string
		c      *http.Client
		origin string
		want   int
	}{
		{"another user", other, p.ts.URL, http.StatusNotFound},
		{"cross-origin (the owner's cookie, another site's page)", owner, "https://evil.example", http.StatusForbidden},
		{"no session", p.client(), p.ts.URL, 0},
	} {
		ws, res, err := dial(tc.c, tc.origin)
		if err == nil {
			ws.CloseNow()
			t.Fatalf("%s: the WebSocket opened", tc.what)
		}
		if res == nil || (tc.want != 0 && res.StatusCode != tc.want) || res.StatusCode == http.StatusSwitchingProtocols {
			t.Fatalf("%s: %v %v; want %d", tc.what, res, err, tc.want)
		}
	}
}
