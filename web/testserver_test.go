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
	"testing"
	"time"

	"github.com/docker/docker/client"

	"workbench/web"
)

const adminPassword = "admin-password-1"

type testPortal struct {
	t   *testing.T
	srv *web.Server
	ts  *httptest.Server
}

// newPortal runs a real portal (SQLite file in a temp dir, simulated
// DGX H100) behind httptest.
func newPortal(t *testing.T, mutate ...func(*web.Config)) *testPortal {
	t.Helper()
	cfg := web.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), GPUs: "mock:dgxh100", AdminPassword: adminPassword,
		Currency: "USD", LogFormat: "text", LogLevel: "error", SampleEvery: time.Second}
	for _, m := range mutate {
		m(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	srv, err := web.NewServer(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// Whatever the test made on the engine goes with it (registered first,
	// so it runs after the portal is closed): a leaked network holds one of
	// the engine's few address pools for good.
	if id, err := srv.Store.InstallID(context.Background()); err == nil {
		t.Cleanup(func() {
			if cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation()); err == nil {
				removeInstallObjects(cli, id)
				cli.Close()
			}
		})
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { ts.Close(); srv.Close() })
	return &testPortal{t: t, srv: srv, ts: ts}
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

// api sends a JSON API request with a bearer token (or none) and decodes
// the JSON answer into a map.
func (p *testPortal) api(method, path, token, body string) (int, map[string]any) {
	p.t.Helper()
	req, _ := http.NewRequest(method, p.ts.URL+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
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
