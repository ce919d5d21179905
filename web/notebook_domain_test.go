package web_test

// Notebook domain: each workbench on its own origin {id}.nb.localhost,
// opened with a one-time code. Requests go to the real portal on a real
// listener; the client dials it for every *.localhost name, as Chromium
// does by itself.

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"workbench/handlers"
	"workbench/web"
)

const nbDomain = "nb.localhost"

// nbPortal is a portal with the notebook domain set, serving on its own
// listener at http://portal.localhost:PORT, and a record of every request
// that reached a notebook host, as the server saw it.
type nbPortal struct {
	*testPortal
	port   string
	portal string // http://portal.localhost:PORT

	mu      sync.Mutex
	nbSeen  []*http.Request // requests to *.nb.localhost
	portalN int
}

func newNBPortal(t *testing.T) *nbPortal {
	t.Helper()
	return startNBPortal(t, func(mutate func(*web.Config)) *testPortal {
		p, _ := enginePortal(t, mutate)
		return p
	})
}

// startNBPortal is newNBPortal on the portal that open makes (newPortal:
// no engine, for tests of what reads only the records).
func startNBPortal(t *testing.T, open func(mutate func(*web.Config)) *testPortal) *nbPortal {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	np := &nbPortal{port: port, portal: "http://portal.localhost:" + port}
	np.testPortal = open(func(c *web.Config) {
		c.PublicURL = np.portal
		c.NotebookDomain = nbDomain
	})
	h := np.srv.Handler()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.Host)
		np.mu.Lock()
		if strings.HasSuffix(host, "."+nbDomain) {
			np.nbSeen = append(np.nbSeen, r.Clone(context.Background()))
		} else {
			np.portalN++
		}
		np.mu.Unlock()
		h.ServeHTTP(w, r)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return np
}

// nbOrigin is the notebook origin of workbench id.
func (np *nbPortal) nbOrigin(id string) string {
	return "http://" + id + "." + nbDomain + ":" + np.port
}

// client is a cookie-keeping client that resolves every name to the
// portal's listener and does not follow redirects.
func (np *nbPortal) client() *http.Client {
	jar, _ := cookiejar.New(nil)
	addr := "127.0.0.1:" + np.port
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	return &http.Client{Jar: jar, Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (np *nbPortal) do(c *http.Client, method, u string, hdr map[string]string) (*http.Response, string) {
	np.t.Helper()
	req, _ := http.NewRequest(method, u, strings.NewReader("hello"))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := c.Do(req)
	if err != nil {
		np.t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(b)
}

func (np *nbPortal) login(c *http.Client, user, password string) {
	np.t.Helper()
	req, _ := http.NewRequest("POST", np.portal+"/login", strings.NewReader(url.Values{"username": {user}, "password": {password}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", np.portal)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, err := c.Do(req)
	if err != nil {
		np.t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		np.t.Fatalf("login %s: %d", user, res.StatusCode)
	}
	// The portal's cookie is host-only (no Domain): browsers never send it
	// to {id}.nb.localhost.
	if ck := sessionCookie(res); ck == nil || ck.Domain != "" {
		np.t.Fatalf("portal session cookie %+v: want one without Domain", ck)
	}
}

// openLink asks the portal to open workbench id and follows the browser's
// way to the one-time link (portal → notebook host's start, which sets the
// state cookie → portal's authorize), returning that link unfollowed.
func (np *nbPortal) openLink(c *http.Client, id string) string {
	np.t.Helper()
	return np.openLinkFrom(c, id, np.portal+"/wb/"+id+"/lab")
}

func (np *nbPortal) openLinkFrom(c *http.Client, id, u string) string {
	np.t.Helper()
	res, _ := np.do(c, "GET", u, nil)
	start := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(start, np.nbOrigin(id)+"/_workbench/start?") {
		np.t.Fatalf("GET %s: %d → %q, want a redirect to %s/_workbench/start", u, res.StatusCode, start, np.nbOrigin(id))
	}
	res, _ = np.do(c, "GET", start, nil)
	authorize := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(authorize, np.portal+handlers.NotebookAuthorizePath+"?") {
		np.t.Fatalf("notebook host's start: %d → %q, want a redirect to the portal's %s", res.StatusCode, authorize, handlers.NotebookAuthorizePath)
	}
	res, _ = np.do(c, "GET", authorize, nil)
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, np.nbOrigin(id)+"/_workbench/open?") {
		np.t.Fatalf("portal's authorize: %d → %q, want a redirect to %s/_workbench/open", res.StatusCode, loc, np.nbOrigin(id))
	}
	return loc
}

// exchange follows a one-time link and returns the response.
func (np *nbPortal) exchange(c *http.Client, link string) *http.Response {
	np.t.Helper()
	res, _ := np.do(c, "GET", link, nil)
	return res
}

func TestNotebookDomainCodeExchange(t *testing.T) {
	np := newNBPortal(t)
	aliceTok := tokenFor(t, np.testPortal, "alice", "user")
	bobTok := tokenFor(t, np.testPortal, "bob", "user")
	launch := func(tok, name string) string {
		code, wb := np.api("POST", "/api/v1/workbenches", tok, `{"name":"`+name+`","image":"fake","flavor":"CPU small"}`)
		if code != 202 {
			t.Fatalf("launch: %d %v", code, wb)
		}
		return wb["id"].(string)
	}
	a, b := launch(aliceTok, "a"), launch(bobTok, "b")
	waitState(t, np.testPortal, aliceTok, a, "running")
	waitState(t, np.testPortal, bobTok, b, "running")

	alice := np.client()
	np.login(alice, "alice", "alice-password")

	// Open: a one-time code, exchanged for the notebook host's own cookie.
	link := np.openLink(alice, a)
	res := np.exchange(alice, link)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/wb/"+a+"/lab" {
		t.Fatalf("exchange: %d → %q", res.StatusCode, res.Header.Get("Location"))
	}
	var nbCookie *http.Cookie
	for _, ck := range res.Cookies() {
		if ck.Name == handlers.NotebookCookieName {
			nbCookie = ck
		}
	}
	if nbCookie == nil || nbCookie.Domain != "" || !nbCookie.HttpOnly || nbCookie.SameSite != http.SameSiteLaxMode {
		t.Fatalf("notebook cookie %+v: want host-only, HttpOnly, SameSite=Lax", nbCookie)
	}
	res, body := np.do(alice, "GET", np.nbOrigin(a)+"/wb/"+a+"/lab", nil)
	if res.StatusCode != 200 || !strings.Contains(body, "Fake JupyterLab") {
		t.Fatalf("notebook on its own origin: %d %q", res.StatusCode, body)
	}
	if res, _ := np.do(alice, "GET", np.nbOrigin(a)+"/", nil); res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/wb/"+a+"/" {
		t.Fatalf("/ on the notebook host: %d → %q", res.StatusCode, res.Header.Get("Location"))
	}
	// Jupyter sees its token and neither cookie.
	_, echoed := np.do(alice, "GET", np.nbOrigin(a)+"/wb/"+a+"/api/echo-headers", nil)
	if strings.Contains(echoed, web.SessionCookieName) || strings.Contains(echoed, handlers.NotebookCookieName) || !strings.Contains(echoed, "token ") {
		t.Fatalf("headers seen by Jupyter: %s", echoed)
	}

	// Single use.
	if res := np.exchange(alice, link); res.StatusCode != http.StatusForbidden {
		t.Fatalf("code reused: %d, want 403", res.StatusCode)
	}
	// A code for alice's workbench does not open bob's, and is used up by trying.
	link2 := np.openLink(alice, a)
	wrongHost := strings.Replace(link2, np.nbOrigin(a), np.nbOrigin(b), 1)
	fresh := np.client()
	if res := np.exchange(fresh, wrongHost); res.StatusCode != http.StatusForbidden {
		t.Fatalf("alice's code on bob's host: %d, want 403", res.StatusCode)
	}
	if res, _ := np.do(fresh, "GET", np.nbOrigin(b)+"/wb/"+b+"/lab", nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("bob's notebook opened for alice: %d", res.StatusCode)
	}
	if res := np.exchange(fresh, link2); res.StatusCode != http.StatusForbidden {
		t.Fatalf("a code tried on the wrong host still works: %d", res.StatusCode)
	}
	// Bob cannot get a code for alice's workbench, and his own notebook
	// cookie opens only his own workbench.
	bob := np.client()
	np.login(bob, "bob", "bob-password")
	if res, _ := np.do(bob, "GET", np.portal+"/wb/"+a+"/lab", nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("bob asks to open alice's workbench: %d, want 404", res.StatusCode)
	}

	// Bob's own link, sent to alice, does not sign her into his notebook
	// (she would type into a notebook he reads): the code opens only in the
	// browser whose state cookie it was minted for, and her try uses it up.
	bobsLink := np.openLink(bob, b)
	if res := np.exchange(alice, bobsLink); res.StatusCode != http.StatusForbidden {
		t.Fatalf("bob's link followed by alice: %d, want 403", res.StatusCode)
	}
	bu, _ := url.Parse(np.nbOrigin(b))
	for _, ck := range alice.Jar.Cookies(bu) {
		if ck.Name == handlers.NotebookCookieName {
			t.Fatalf("alice's browser holds a notebook cookie for bob's workbench")
		}
	}
	if res := np.exchange(bob, bobsLink); res.StatusCode != http.StatusForbidden {
		t.Fatalf("bob's link after alice tried it: %d, want 403 (used up)", res.StatusCode)
	}
	// Sending alice to bob's host's start gets her nowhere: the portal
	// authorizes only the owner.
	res, _ = np.do(alice, "GET", np.nbOrigin(b)+"/_workbench/start?path=/wb/"+b+"/lab", nil)
	if res, _ := np.do(alice, "GET", res.Header.Get("Location"), nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("the portal authorized alice for bob's workbench: %d, want 404", res.StatusCode)
	}
	// A start from a portal page bookmarked before logging in goes through
	// the login page and on.
	stranger := np.client()
	res, _ = np.do(stranger, "GET", np.nbOrigin(b)+"/_workbench/start?path=/wb/"+b+"/lab", nil)
	if res, _ := np.do(stranger, "GET", res.Header.Get("Location"), nil); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/login?next=") {
		t.Fatalf("authorize without a portal session: %d → %q, want the login page", res.StatusCode, res.Header.Get("Location"))
	}
	if res := np.exchange(bob, np.openLink(bob, b)); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("bob opening his own workbench: %d", res.StatusCode)
	}
	au, _ := url.Parse(np.nbOrigin(a))
	thief := np.client()
	thief.Jar.SetCookies(au, bob.Jar.Cookies(bu))
	if res, _ := np.do(thief, "GET", np.nbOrigin(a)+"/wb/"+a+"/lab", nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("bob's notebook cookie on alice's host: %d, want 404", res.StatusCode)
	}
	if res, _ := np.do(bob, "GET", np.nbOrigin(b)+"/wb/"+a+"/lab", nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("alice's path on bob's host: %d, want 404", res.StatusCode)
	}

	// CSRF and WebSocket Origin: only the notebook host's own origin.
	post := func(origin, site string) int {
		res, _ := np.do(alice, "POST", np.nbOrigin(a)+"/wb/"+a+"/api/homefile?name=x.txt", map[string]string{"Origin": origin, "Sec-Fetch-Site": site})
		return res.StatusCode
	}
	if got := post(np.portal, "same-site"); got != http.StatusForbidden {
		t.Errorf("POST from the portal's origin to the notebook: %d, want 403", got)
	}
	if got := post(np.nbOrigin(b), "same-site"); got != http.StatusForbidden {
		t.Errorf("POST from another notebook's origin: %d, want 403", got)
	}
	if got := post(np.nbOrigin(a), "same-origin"); got >= 400 {
		t.Errorf("POST from the notebook's own origin: %d", got)
	}
	dialWS := func(origin string) (*websocket.Conn, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		u := "ws" + strings.TrimPrefix(np.nbOrigin(a), "http") + "/wb/" + a + "/api/ws-echo"
		ws, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: alice, HTTPHeader: http.Header{"Origin": {origin}}})
		return ws, err
	}
	if ws, err := dialWS(np.portal); err == nil {
		ws.CloseNow()
		t.Error("WebSocket from the portal's origin to the notebook accepted")
	}
	ws, err := dialWS(np.nbOrigin(a))
	if err != nil {
		t.Fatalf("WebSocket from the notebook's own origin: %v", err)
	}
	defer ws.CloseNow()

	// The portal does not proxy in this mode.
	if res, _ := np.do(alice, "POST", np.portal+"/wb/"+a+"/api/homefile?name=y.txt", map[string]string{"Origin": np.portal, "Sec-Fetch-Site": "same-origin"}); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST to the portal's /wb/: %d, want 405", res.StatusCode)
	}

	// Logging out of the portal ends the notebook session and its WebSocket.
	logout, _ := http.NewRequest("POST", np.portal+"/logout", nil)
	logout.Header.Set("Origin", np.portal)
	logout.Header.Set("Sec-Fetch-Site", "same-origin")
	if res, err := alice.Do(logout); err != nil || res.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout: %v %v", res, err)
	}
	assertWSClosedWithin(t, ws, time.Second, "portal logout")
	if res, _ := np.do(alice, "GET", np.nbOrigin(a)+"/wb/"+a+"/lab", nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("notebook after portal logout: %d, want 404", res.StatusCode)
	}

	// At the server: no request to a notebook host carried the portal cookie.
	np.mu.Lock()
	defer np.mu.Unlock()
	for _, r := range np.nbSeen {
		if _, err := r.Cookie(web.SessionCookieName); err == nil {
			t.Errorf("the portal session cookie reached %s%s", r.Host, r.URL.Path)
		}
	}
	if len(np.nbSeen) < 10 {
		t.Errorf("only %d requests reached notebook hosts", len(np.nbSeen))
	}
	np.srv.Manager.Wait()
}

func TestNotebookDomainConfig(t *testing.T) {
	base := func() web.Config {
		return web.Config{Addr: ":8080", DataDir: "d", GPUs: "none", Currency: "USD", LogFormat: "text", LogLevel: "info",
			PublicURL: "https://gpu.example.org"}
	}
	for _, tc := range []struct {
		domain, public string
		ok             bool
	}{
		{"nb.example.org", "https://gpu.example.org", true},
		{"NB.Example.org.", "https://gpu.example.org", true},
		{"nb.example.org", "", false},                                // scheme and port come from the public URL
		{"https://nb.example.org", "https://gpu.example.org", false}, // no scheme
		{"*.nb.example.org", "https://gpu.example.org", false},       // no wildcard
		{"nb.example.org:8443", "https://gpu.example.org", false},
		{"example.org", "https://gpu.example.org", false}, // the portal would be a notebook host
	} {
		c := base()
		c.NotebookDomain, c.PublicURL = tc.domain, tc.public
		err := c.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("domain %q, public URL %q: err %v, want ok=%v", tc.domain, tc.public, err, tc.ok)
		}
	}
}

// Over https with a notebook domain the portal's cookie carries the
// __Host- prefix, so no notebook host can toss one onto the portal through
// a shared parent domain.
func TestNotebookDomainHostPrefixedCookie(t *testing.T) {
	p := newPortal(t, func(c *web.Config) { c.PublicURL, c.NotebookDomain = "https://gpu.example.org", "nb.example.org" })
	res := p.postForm(p.client(), "/login", url.Values{"username": {"admin"}, "password": {adminPassword}})
	var got *http.Cookie
	for _, ck := range res.Cookies() {
		if ck.Name == "__Host-"+web.SessionCookieName {
			got = ck
		}
	}
	if res.StatusCode != http.StatusSeeOther || got == nil || !got.Secure || got.Domain != "" || got.Path != "/" {
		t.Fatalf("login: %d, cookies %v; want __Host-%s, Secure, Path=/, no Domain", res.StatusCode, res.Header.Values("Set-Cookie"), web.SessionCookieName)
	}
	// The notebook host's state cookie too: a sibling host must not be able
	// to plant one (with Domain=nb.example.org) that a code was minted for.
	req, _ := http.NewRequest("GET", p.ts.URL+"/_workbench/start?path=/wb/abc/", nil)
	req.Host = "abc.nb.example.org"
	res, err := p.client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	got = nil
	for _, ck := range res.Cookies() {
		if ck.Name == "__Host-"+handlers.NotebookStateCookie {
			got = ck
		}
	}
	if res.StatusCode != http.StatusSeeOther || got == nil || !got.Secure || got.Domain != "" || got.Path != "/" || !got.HttpOnly ||
		!strings.HasPrefix(res.Header.Get("Location"), "https://gpu.example.org"+handlers.NotebookAuthorizePath+"?") {
		t.Fatalf("start: %d → %q, cookies %v; want __Host-%s, Secure, HttpOnly, Path=/, no Domain", res.StatusCode, res.Header.Get("Location"), res.Header.Values("Set-Cookie"), handlers.NotebookStateCookie)
	}
}

// Opening a notebook host's address directly (a bookmark, a tab restored
// after the browser restarted and dropped the host's session cookie) goes
// through the opening hops and lands in the notebook for its owner, as the
// portal's Open link does, rather than reading "There is no such
// workbench". A script without a session still gets 404, and someone
// else's browser gets no further than the portal's refusal.
func TestNotebookHostAddressOpensForItsOwner(t *testing.T) {
	np := newNBPortal(t)
	aliceTok := tokenFor(t, np.testPortal, "alice", "user")
	tokenFor(t, np.testPortal, "bob", "user")
	code, wb := np.api("POST", "/api/v1/workbenches", aliceTok, `{"name":"a","image":"fake","flavor":"CPU small"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	a := wb["id"].(string)
	waitState(t, np.testPortal, aliceTok, a, "running")
	html := map[string]string{"Accept": "text/html,application/xhtml+xml"}

	alice := np.client()
	np.login(alice, "alice", "alice-password")
	res, _ := np.do(alice, "GET", np.nbOrigin(a)+"/wb/"+a+"/lab?x=1", html)
	start := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(start, "/_workbench/start?") {
		t.Fatalf("the notebook address without its cookie: %d → %q, want the opening hops", res.StatusCode, start)
	}
	link := np.openLinkFrom(alice, a, np.portal+"/wb/"+a+"/lab?x=1")
	if res := np.exchange(alice, link); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/wb/"+a+"/lab?x=1" {
		t.Fatalf("exchange: %d → %q, want back to the address asked for", res.StatusCode, res.Header.Get("Location"))
	}
	// The hop itself, followed from the notebook host's redirect, goes to
	// the portal's authorize with that address.
	res, _ = np.do(alice, "GET", np.nbOrigin(a)+start, nil)
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || !strings.Contains(loc, url.QueryEscape("/wb/"+a+"/lab?x=1")) {
		t.Fatalf("start from the notebook address: %d → %q", res.StatusCode, loc)
	}

	if res, _ := np.do(np.client(), "GET", np.nbOrigin(a)+"/wb/"+a+"/api/status", nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("a script without a session: %d, want 404", res.StatusCode)
	}
	bob := np.client()
	np.login(bob, "bob", "bob-password")
	res, _ = np.do(bob, "GET", np.nbOrigin(a)+"/wb/"+a+"/lab", html)
	res, _ = np.do(bob, "GET", np.nbOrigin(a)+res.Header.Get("Location"), nil)
	if res, _ := np.do(bob, "GET", res.Header.Get("Location"), nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("bob at alice's notebook address ends with %d, want the portal's 404", res.StatusCode)
	}
}
