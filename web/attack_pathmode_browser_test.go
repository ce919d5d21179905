package web_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"

	"workbench/models"
	"workbench/web"
)

// hostileNotebook is the Jupyter of a user who put hostile files in her own
// home: it asks for a service worker over the whole origin, plants a
// session cookie on the WebSocket handshake, and serves a page to run
// script from.
func hostileNotebook(t *testing.T, id string) *httptest.Server {
	base := "/wb/" + id + "/"
	mux := http.NewServeMux()
	mux.HandleFunc(base+"lab", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<!doctype html><title>notebook</title><h1>Hostile notebook</h1>")
	})
	mux.HandleFunc(base+"sw.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		w.Header().Set("Service-Worker-Allowed", "/")
		io.WriteString(w, `self.addEventListener("fetch", e => { if (new URL(e.request.url).pathname === "/login") e.respondWith(new Response("<h1>fake login</h1>", {headers: {"Content-Type": "text/html"}})); });`)
	})
	mux.HandleFunc(base+"ws", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Set-Cookie", web.SessionCookieName+"=planted; Path=/")
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			typ, msg, err := c.Read(r.Context())
			if err != nil || c.Write(r.Context(), typ, msg) != nil {
				return
			}
		}
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// hostileWorkbench is a running workbench of owner whose "Jupyter" is
// hostileNotebook (no container: the test portal runs no lifecycle loops
// that would notice).
func hostileWorkbench(t *testing.T, p *testPortal, owner *models.User) *models.Workbench {
	t.Helper()
	ctx0 := context.Background()
	imgs, _ := p.srv.Store.ListImages(ctx0, true)
	fls, _ := p.srv.Store.ListFlavors(ctx0, true)
	var cpu *models.Flavor
	for i := range fls {
		if fls[i].GPUCount == 0 {
			cpu = &fls[i]
		}
	}
	if len(imgs) == 0 || cpu == nil {
		t.Fatal("no image or CPU flavor in the seeded catalog")
	}
	wb := &models.Workbench{Name: "mine", OwnerID: owner.ID, ImageID: imgs[0].ID, FlavorID: cpu.ID, Token: "jupyter-token"}
	if err := p.srv.Store.CreateWorkbench(ctx0, wb, models.GPUNeed{}, nil); err != nil {
		t.Fatal(err)
	}
	up := hostileNotebook(t, wb.ID)
	if err := p.srv.Store.SetWorkbenchState(ctx0, wb.ID, models.StateRunning, 100, "",
		map[string]any{"endpoint": strings.TrimPrefix(up.URL, "http://")}); err != nil {
		t.Fatal(err)
	}
	return wb
}

// Path mode, in Chromium: script in a user's own notebook (served on the
// portal's origin) tries to take over the origin. It cannot register a
// service worker for "/", cannot replace the session cookie through a
// WebSocket handshake, and its requests to the portal's API are refused;
// logging out clears the service workers it could register.
func TestBrowserPathModeNotebookCannotTakeTheOrigin(t *testing.T) {
	p := newPortal(t)
	ctx0 := context.Background()
	alice, err := p.srv.Store.CreateUser(ctx0, models.NewUser{Username: "alice", Password: "alice-password"})
	if err != nil {
		t.Fatal(err)
	}
	wb := hostileWorkbench(t, p, alice)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(p.ts.URL, "http://"))
	portal := "http://localhost:" + port // a secure context, as service workers need

	ctx := btNewBrowser(t)
	btNavigate(t, ctx, portal+"/login")
	if resp := btLogin(t, ctx, "alice", "alice-password"); resp.Status != http.StatusOK {
		t.Fatalf("login: %d", resp.Status)
	}
	sessionValue := func() string {
		var got network.GetCookiesResult
		btDo(t, ctx, "read cookies", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			r, err := cdp.Call(ctx, tg, network.GetCookies, network.GetCookiesParams{URLs: []string{portal + "/"}})
			got = r
			return err
		}))
		for _, c := range got.Cookies {
			if c.Name == web.SessionCookieName {
				return c.Value
			}
		}
		return ""
	}
	before := sessionValue()
	if before == "" {
		t.Fatal("no session cookie after login")
	}
	if resp := btNavigate(t, ctx, portal+"/wb/"+wb.ID+"/lab"); resp.Status != http.StatusOK {
		t.Fatalf("open the notebook: %d", resp.Status)
	}
	js := func(what, expr string) string {
		t.Helper()
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](strings.ReplaceAll(expr, "ID", wb.ID), chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		t.Logf("%s: %s", what, got)
		return got
	}

	// 1. A service worker over the whole origin is refused.
	if got := js("register a service worker for /", `navigator.serviceWorker.register("/wb/ID/sw.js", {scope: "/"}).then(() => "registered", e => "refused: " + e.name)`); got != "refused: SecurityError" {
		t.Errorf("service worker with scope / from a notebook: %s", got)
	}
	// Within its own path it may (that is the notebook's own business)...
	if got := js("register a service worker for /wb/ID/", `navigator.serviceWorker.register("/wb/ID/sw.js").then(r => "registered " + new URL(r.scope).pathname, e => "refused: " + e.name)`); got != "registered /wb/"+wb.ID+"/" {
		t.Fatalf("service worker within the notebook's path: %s", got)
	}

	// 2. A WebSocket handshake cannot replace the portal's session cookie.
	if got := js("WebSocket whose handshake sets a cookie", `new Promise(res => { const ws = new WebSocket("ws://" + location.host + "/wb/ID/ws"); ws.onopen = () => ws.send("x"); ws.onmessage = e => { ws.close(); res("echo " + e.data); }; ws.onerror = () => res("error"); })`); got != "echo x" {
		t.Fatalf("WebSocket through the proxy: %s", got)
	}
	if after := sessionValue(); after != before {
		t.Fatalf("the session cookie changed to %q after a notebook's WebSocket handshake", after)
	}

	// 3. The notebook's requests to the portal with the session are refused.
	if got := js("fetch /api/v1/me", `fetch("/api/v1/me").then(r => String(r.status))`); got != "403" {
		t.Errorf("notebook reads /api/v1/me: %s, want 403", got)
	}
	if got := js("mint a token", `fetch("/api/v1/tokens", {method: "POST", headers: {"Content-Type": "application/json"}, body: '{"name":"stolen","expires_days":0}'}).then(r => String(r.status))`); got != "403" {
		t.Errorf("notebook mints a token: %s, want 403", got)
	}
	// Even without Referer, which script can suppress, sudo mode holds.
	if got := js("mint a token without Referer", `fetch("/api/v1/tokens", {method: "POST", referrerPolicy: "no-referrer", headers: {"Content-Type": "application/json"}, body: '{"name":"stolen","expires_days":0}'}).then(r => r.json()).then(j => j.error ? j.error.code : "created")`); got != "sudo_required" {
		t.Errorf("notebook mints a token without Referer: %s, want sudo_required", got)
	}
	if toks, _ := p.srv.Store.ListTokens(ctx0, alice.ID); len(toks) != 0 {
		t.Fatalf("the notebook minted %d tokens", len(toks))
	}

	// 4. Logging out clears the origin's storage: the notebook's service
	// worker is gone.
	btNavigate(t, ctx, portal+"/")
	btSubmit(t, ctx, "click Log out", chromedp.Click(chromedp.CSS(`.account form[action="/logout"] button`)))
	if got := js("service workers after logout", `navigator.serviceWorker.getRegistrations().then(rs => String(rs.length))`); got != "0" {
		t.Errorf("%s service worker(s) survived logout", got)
	}
}

// Path mode, in Chromium: a notebook's script rewrites its own address to
// a portal page (history.replaceState, same origin) so that the forms it
// submits carry the portal page as Referer, and submits the SSH key form
// while its user is within the 10 minutes after confirming her password:
// into a hidden iframe, and by itself into its own tab. Neither adds the
// key (nor shows the confirm page for the script's key).
func TestBrowserPathModeNotebookCannotForgeAPortalForm(t *testing.T) {
	p := newPortal(t)
	ctx0 := context.Background()
	alice, err := p.srv.Store.CreateUser(ctx0, models.NewUser{Username: "alice", Password: "alice-password"})
	if err != nil {
		t.Fatal(err)
	}
	wb := hostileWorkbench(t, p, alice)
	keys := func() int {
		list, err := p.srv.Store.ListSSHKeys(ctx0, alice.ID)
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}
	ctx := btNewBrowser(t)
	btNavigate(t, ctx, p.ts.URL+"/login")
	if resp := btLogin(t, ctx, "alice", "alice-password"); resp.Status != http.StatusOK {
		t.Fatalf("login: %d", resp.Status)
	}
	// Alice adds her own key with a click: she confirms her password,
	// which opens the sudo window.
	own, _ := newAuthorizedKey(t, "alice@laptop")
	btNavigate(t, ctx, p.ts.URL+"/settings/ssh-keys")
	btDo(t, ctx, "fill in her key",
		chromedp.SendKeys(chromedp.CSS(`[data-testid=new-ssh-key-form] input[name=name]`), "laptop"),
		chromedp.SetValue(chromedp.CSS(`[data-testid=new-ssh-key-form] textarea[name=public_key]`), own),
	)
	resp := btSubmit(t, ctx, "add her key", chromedp.Click(chromedp.CSS(`[data-testid=new-ssh-key-form] button[type=submit]`)))
	if resp = btConfirmSudo(t, ctx, resp, "alice-password"); resp.Status != http.StatusOK || keys() != 1 {
		t.Fatalf("her own key by the page: status %d, %d keys", resp.Status, keys())
	}

	if resp := btNavigate(t, ctx, p.ts.URL+"/wb/"+wb.ID+"/lab"); resp.Status != http.StatusOK {
		t.Fatalf("open the notebook: %d", resp.Status)
	}
	stolen, _ := newAuthorizedKey(t, "mallory@evil")
	forge := func(target string) string {
		return `(() => {
			history.replaceState(null, "", "/settings/ssh-keys");
			const f = document.createElement("form");
			f.method = "post"; f.action = "/settings/ssh-keys"; f.target = ` + btJsString(target) + `;
			for (const [k, v] of [["name", "backdoor"], ["public_key", ` + btJsString(stolen) + `]]) {
				const i = document.createElement("input"); i.name = k; i.value = v; f.appendChild(i);
			}
			document.body.appendChild(f);
			return f;
		})()`
	}
	// Into a hidden iframe: the answer is not shown, the change would be.
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`new Promise(res => {
		const fr = document.createElement("iframe"); fr.name = "hidden"; fr.style.display = "none";
		document.body.appendChild(fr); // its about:blank has loaded: the next load is the answer
		fr.onload = () => res("loaded");
		`+forge("hidden")+`.submit();
	})`, chromedp.EvalAwaitPromise))
	// The iframe's load event fires once the portal answered (whose page
	// it does not show): the key would be stored by then.
	if err != nil || got != "loaded" {
		t.Fatalf("the script's iframe submit: %q, %v", got, err)
	}
	if n := keys(); n != 1 {
		t.Fatalf("a notebook's script added an SSH key through a hidden iframe: %d keys", n)
	}
	// Into its own tab, without a click.
	// (The submit navigates after the script returns: wait for the notebook
	// page to be replaced by the portal's answer.)
	btDo(t, ctx, "the script submits into its tab", chromedp.Evaluate[chromedp.Void](forge("_self")+`.submit()`))
	btDo(t, ctx, "the portal's answer", chromedp.WaitVisible(chromedp.CSS(`[data-testid=error]`)))
	if n := keys(); n != 1 {
		t.Fatalf("a notebook's script's own submit added its key: %d keys", n)
	}
	if btVisible(t, ctx, `[data-testid=sudo-form]`) || !strings.Contains(btText(t, ctx, "[data-testid=error]"), "did not come from one of the portal") {
		t.Errorf("the script's form got the confirm page or no refusal: %q", btText(t, ctx, "[data-testid=error]"))
	}
}
