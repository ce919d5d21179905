package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"workbench/web"
)

func pprofGet(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestPprofOffByDefault: no profiler anywhere unless WORKBENCH_PPROF_ADDR
// is set, and never on the portal's own address.
func TestPprofOffByDefault(t *testing.T) {
	p := newPortal(t)
	if p.srv.PprofHandler() != nil {
		t.Fatal("a pprof handler exists without WORKBENCH_PPROF_ADDR")
	}
	admin := tokenFor(t, p, "admin", "admin")
	if code, body := pprofGet(t, p.ts.URL+"/debug/pprof/", admin); code == http.StatusOK && strings.Contains(body, "goroutine") {
		t.Fatal("/debug/pprof served on the portal's address")
	}
}

// TestPprofSeparateAddressAdminOnly: on its own address the profiler
// answers an admin's token only.
func TestPprofSeparateAddressAdminOnly(t *testing.T) {
	p := newPortal(t, func(c *web.Config) { c.PprofAddr = "127.0.0.1:0" })
	admin := tokenFor(t, p, "admin", "admin")
	user := tokenFor(t, p, "ada", "user")
	if code, body := pprofGet(t, p.ts.URL+"/debug/pprof/", admin); code == http.StatusOK && strings.Contains(body, "goroutine") {
		t.Fatal("/debug/pprof served on the portal's address")
	}
	ps := httptest.NewServer(p.srv.PprofHandler())
	defer ps.Close()
	if code, _ := pprofGet(t, ps.URL+"/debug/pprof/", ""); code != http.StatusUnauthorized {
		t.Errorf("no token: %d, want 401", code)
	}
	if code, _ := pprofGet(t, ps.URL+"/debug/pprof/", "not-a-token"); code != http.StatusUnauthorized {
		t.Errorf("bad token: %d, want 401", code)
	}
	if code, _ := pprofGet(t, ps.URL+"/debug/pprof/", user); code != http.StatusForbidden {
		t.Errorf("a user's token: %d, want 403", code)
	}
	if code, body := pprofGet(t, ps.URL+"/debug/pprof/", admin); code != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Errorf("an admin's token: %d", code)
	}
	if code, body := pprofGet(t, ps.URL+"/debug/pprof/goroutine?debug=1", admin); code != http.StatusOK || !strings.Contains(body, "goroutine profile") {
		t.Errorf("goroutine profile: %d", code)
	}
}
