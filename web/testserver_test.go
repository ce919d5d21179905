package web_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"workbench/models"
	"workbench/web"
)

const adminPassword = "admin-password-1"

type testPortal struct {
	t   *testing.T
	srv *web.Server
	ts  *httptest.Server
	// dir is the data directory (the SQLite file), for restart; close
	// ends this portal (once; the test's end calls it too).
	dir   string
	close func()
}

// portalConfig is the one configuration every in-process test portal
// starts from (a real SQLite file in dataDir, simulated DGX H100, the known
// admin password), with mutate applied and validated.
func portalConfig(dataDir string, mutate ...func(*web.Config)) (web.Config, error) {
	cfg := web.Config{Addr: "127.0.0.1:0", DataDir: dataDir, GPUs: "mock:dgxh100", AdminPassword: adminPassword,
		Currency: "USD", LogFormat: "text", LogLevel: "error", SampleEvery: time.Second,
		SampleMaxAge: time.Hour} // readings are taken by hand (SampleGPUs): keep them current
	for _, m := range mutate {
		m(&cfg)
	}
	return cfg, cfg.Validate()
}

// openPortal builds a portal on dataDir: the one place test portals are
// made (newPortal for tests and fuzz targets, startBenchPortal for
// benchmarks that manage their own lifetime).
func openPortal(dataDir string, mutate ...func(*web.Config)) (*web.Server, error) {
	cfg, err := portalConfig(dataDir, mutate...)
	if err != nil {
		return nil, err
	}
	return web.NewServer(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard)
}

// newPortal runs a real portal (SQLite file in a temp dir, simulated
// DGX H100) behind httptest.
func newPortal(t *testing.T, mutate ...func(*web.Config)) *testPortal {
	t.Helper()
	dir := t.TempDir()
	srv, ts, closePortal := servePortalIn(t, dir, mutate...)
	return &testPortal{t: t, srv: srv, ts: ts, dir: dir, close: closePortal}
}

// restart closes p's portal and opens a new one on the same data
// directory, as a restart or an upgrade of the portal does: what it kept
// only in memory is gone, what it stored is not. The new portal answers
// at an address of its own (cookies are kept by host, not port, so a
// client's carry over); an SSH server of the old one is not moved
// (serveSSH again).
func (p *testPortal) restart(mutate ...func(*web.Config)) *testPortal {
	p.t.Helper()
	p.close()
	srv, ts, closePortal := servePortalIn(p.t, p.dir, mutate...)
	return &testPortal{t: p.t, srv: srv, ts: ts, dir: p.dir, close: closePortal}
}

// servePortal is newPortal for any testing.TB (fuzz targets too): the
// server and its httptest front, both closed, and whatever the portal made
// on the engine removed, when tb ends.
func servePortal(tb testing.TB, mutate ...func(*web.Config)) (*web.Server, *httptest.Server) {
	tb.Helper()
	srv, ts, _ := servePortalIn(tb, tb.TempDir(), mutate...)
	return srv, ts
}

// servePortalIn is servePortal on the data directory dir; it also returns
// a function that closes the portal before tb ends (closing it twice is
// closing it once).
func servePortalIn(tb testing.TB, dir string, mutate ...func(*web.Config)) (*web.Server, *httptest.Server, func()) {
	tb.Helper()
	srv, err := openPortal(dir, mutate...)
	if err != nil {
		tb.Fatalf("start the portal: %v", err)
	}
	// Whatever the test made on the engine goes with it (registered first,
	// so it runs after the portal is closed): a leaked network holds one of
	// the engine's few address pools for good.
	if id, err := srv.Store.InstallID(context.Background()); err == nil {
		noteInstall(id, tb.Name())
		tb.Cleanup(func() {
			if cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation()); err == nil {
				removeInstallObjects(cli, id)
				cli.Close()
			}
		})
	}
	ts := httptest.NewServer(srv.Handler())
	var once sync.Once
	closePortal := func() { once.Do(func() { ts.Close(); srv.Close() }) }
	tb.Cleanup(closePortal)
	return srv, ts, closePortal
}

// client returns a browser-like client with its own cookie jar that does
// not follow redirects (tests look at them).
func (p *testPortal) client() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// postForm sends a same-origin form POST, as a browser on the portal would.
func (p *testPortal) postForm(c *http.Client, path string, form url.Values) *http.Response {
	p.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, p.ts.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Origin", p.ts.URL)
	// As a browser submits a form of the portal's own page on a click.
	req.Header.Set("Sec-Fetch-Mode", "navigate")
	req.Header.Set("Sec-Fetch-Dest", "document")
	req.Header.Set("Sec-Fetch-User", "?1")
	req.Header.Set("Referer", p.ts.URL+"/")
	res, err := c.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	res.Body.Close()
	return res
}

func (p *testPortal) get(c *http.Client, path string) (*http.Response, string) {
	p.t.Helper()
	res, err := c.Get(p.ts.URL + path)
	if err != nil {
		p.t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(b)
}

// login logs c in and fails the test unless it worked.
func (p *testPortal) login(c *http.Client, user, password string) {
	p.t.Helper()
	res := p.postForm(c, "/login", url.Values{"username": {user}, "password": {password}})
	if res.StatusCode != http.StatusSeeOther {
		p.t.Fatalf("login %s: status %d", user, res.StatusCode)
	}
}

// loginSudo logs c in and confirms the password (sudo mode), as an admin
// does before changing settings or creating an API token in the browser.
func (p *testPortal) loginSudo(c *http.Client, user, password string) {
	p.t.Helper()
	p.login(c, user, password)
	p.sudo(c, password)
}

// sudo confirms c's password for the next 10 minutes.
func (p *testPortal) sudo(c *http.Client, password string) {
	p.t.Helper()
	res := p.postForm(c, "/sudo", url.Values{"sudo_password": {password}, "next": {"/"}})
	if res.StatusCode != http.StatusSeeOther {
		p.t.Fatalf("sudo: status %d", res.StatusCode)
	}
}

// apiBytes sends a JSON API request with a bearer token (or none), as a
// script would (no cookie, no Origin), and returns the status and the raw
// answer: what api and strictAPI decode.
func (p *testPortal) apiBytes(method, path, token, body string) (int, []byte) {
	p.t.Helper()
	return p.apiBytesAs("application/json", method, path, token, body)
}

// apiBytesAs is apiBytes with the body labelled contentType (curl -d says
// application/x-www-form-urlencoded).
func (p *testPortal) apiBytesAs(contentType, method, path, token, body string) (int, []byte) {
	p.t.Helper()
	req, _ := http.NewRequest(method, p.ts.URL+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		p.t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	return res.StatusCode, b
}

// api sends a JSON API request with a bearer token (or none) and decodes
// the JSON answer into a map.
func (p *testPortal) api(method, path, token, body string) (int, map[string]any) {
	p.t.Helper()
	code, b := p.apiBytes(method, path, token, body)
	var out map[string]any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &out); err != nil {
			p.t.Fatalf("%s %s: not JSON (%d): %s", method, path, code, b)
		}
	}
	return code, out
}

func sessionCookie(res *http.Response) *http.Cookie {
	for _, c := range res.Cookies() {
		if c.Name == web.SessionCookieName {
			return c
		}
	}
	return nil
}

func errCode(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

// postFormBody is postForm that also returns the body.
func (p *testPortal) postFormBody(c *http.Client, path string, form url.Values) (*http.Response, string) {
	p.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, p.ts.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Origin", p.ts.URL)
	// As a browser submits a form of the portal's own page on a click.
	req.Header.Set("Sec-Fetch-Mode", "navigate")
	req.Header.Set("Sec-Fetch-Dest", "document")
	req.Header.Set("Sec-Fetch-User", "?1")
	req.Header.Set("Referer", p.ts.URL+"/")
	res, err := c.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(b)
}

// sessionAPI sends a JSON API request with c's session cookie, from the
// portal's own origin, and decodes the answer.
func (p *testPortal) sessionAPI(c *http.Client, method, path, body string) (int, map[string]any) {
	p.t.Helper()
	req, _ := http.NewRequest(method, p.ts.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Origin", p.ts.URL)
	res, err := c.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(res.Body)
	if len(b) > 0 {
		if err := json.Unmarshal(b, &out); err != nil {
			p.t.Fatalf("%s %s: not JSON (%d): %s", method, path, res.StatusCode, b)
		}
	}
	return res.StatusCode, out
}

// runningRecord records a workbench of owner as running since now, holding
// need (models.GPUNeed{} for none), with no container behind it: for
// tests of pages and routes that only read the record.
func (p *testPortal) runningRecord(owner *models.User, name string, need models.GPUNeed) *models.Workbench {
	p.t.Helper()
	ctx := context.Background()
	wb := &models.Workbench{Name: name, OwnerID: owner.ID, ImageID: 1, FlavorID: 1, Token: "t"}
	if err := p.srv.Store.CreateWorkbench(ctx, wb, need, nil); err != nil {
		p.t.Fatal(err)
	}
	if err := p.srv.Store.SetWorkbenchState(ctx, wb.ID, models.StateRunning, 100, "", map[string]any{"started_at": time.Now().UTC()}); err != nil {
		p.t.Fatal(err)
	}
	return wb
}
