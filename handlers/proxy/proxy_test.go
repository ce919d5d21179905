package proxy

import (
	"net/http"
	"strings"
	"testing"
)

func TestForwardsPathAndQueryUnchanged(t *testing.T) {
	got := make(chan *http.Request, 1)
	f := newFixture(t, echoHeaders(got), nil)
	const target = "/wb/abc-1/api/contents/my%20dir/a%2Fb%3F.ipynb?content=1&x=%2F&y=a+b"
	res, _ := f.do("GET", target, nil, "")
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	r := <-got
	if r.RequestURI != target {
		t.Errorf("upstream RequestURI = %q, want %q", r.RequestURI, target)
	}
	// Jupyter compares Origin with Host, so the portal's Host must survive.
	if want := strings.TrimPrefix(f.front.URL, "http://"); r.Host != want {
		t.Errorf("upstream Host = %q, want %q", r.Host, want)
	}
}

func TestRedirectsToTrailingSlash(t *testing.T) {
	f := newFixture(t, http.NotFoundHandler(), nil)
	res, _ := f.do("GET", "/wb/abc?x=1", nil, "")
	if res.StatusCode != http.StatusPermanentRedirect || res.Header.Get("Location") != "/wb/abc/?x=1" {
		t.Fatalf("got %d Location=%q", res.StatusCode, res.Header.Get("Location"))
	}
	if f.upHits.Load() != 0 {
		t.Error("redirect reached upstream")
	}
}

func TestStripsPortalCookieKeepsOthers(t *testing.T) {
	got := make(chan *http.Request, 1)
	f := newFixture(t, echoHeaders(got), nil)
	f.do("GET", "/wb/abc/lab", map[string]string{"Cookie": "wbsession=secret; _xsrf=2|abc|def; other=1"}, "")
	r := <-got
	if c := r.Header.Get("Cookie"); c != "_xsrf=2|abc|def; other=1" {
		t.Errorf("upstream Cookie = %q", c)
	}

	f.do("GET", "/wb/abc/lab", map[string]string{"Cookie": "wbsession=secret"}, "")
	r = <-got
	if _, ok := r.Header["Cookie"]; ok {
		t.Errorf("upstream got Cookie %q, want none", r.Header.Get("Cookie"))
	}
}

func TestReplacesAuthorizationAndForwardedHeaders(t *testing.T) {
	got := make(chan *http.Request, 1)
	f := newFixture(t, echoHeaders(got), nil)
	f.do("GET", "/wb/abc/api/status", map[string]string{
		"Authorization":      "Bearer portal-api-token",
		"X-Forwarded-For":    "6.6.6.6",
		"X-Forwarded-Host":   "evil.example",
		"X-Forwarded-Prefix": "/evil",
		"Forwarded":          "for=6.6.6.6",
	}, "")
	r := <-got
	if a := r.Header.Values("Authorization"); len(a) != 1 || a[0] != "token tok-abc" {
		t.Errorf("upstream Authorization = %q", a)
	}
	if x := r.Header.Get("X-Forwarded-For"); x != "127.0.0.1" {
		t.Errorf("X-Forwarded-For = %q", x)
	}
	if x := r.Header.Get("X-Forwarded-Host"); x != strings.TrimPrefix(f.front.URL, "http://") {
		t.Errorf("X-Forwarded-Host = %q", x)
	}
	if x := r.Header.Get("X-Forwarded-Proto"); x != "http" {
		t.Errorf("X-Forwarded-Proto = %q", x)
	}
	for _, h := range []string{"X-Forwarded-Prefix", "Forwarded"} {
		if v := r.Header.Get(h); v != "" {
			t.Errorf("%s leaked: %q", h, v)
		}
	}
}

func TestResponseHeaders(t *testing.T) {
	f := newFixture(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Add("Set-Cookie", "wbsession=evil; Path=/")
		h.Add("Set-Cookie", "_xsrf=1; Path=/wb/abc/")
		h.Add("Set-Cookie", "WBSession=shadow; Path=/wb/abc/")
		h.Set("Content-Security-Policy", "frame-ancestors 'self'")
		h.Set("Clear-Site-Data", `"cookies"`)
		h.Set("Service-Worker-Allowed", "/")
		w.Write([]byte("ok"))
	}), nil)
	res, _ := f.do("GET", "/wb/abc/lab", nil, "")
	if sc := res.Header.Values("Set-Cookie"); len(sc) != 0 {
		t.Errorf("Set-Cookie = %q, want none: no cookie of the notebook reaches the portal origin", sc)
	}
	if v := res.Header.Get("Service-Worker-Allowed"); v != "" {
		t.Errorf("Service-Worker-Allowed leaked: %q", v)
	}
	if v := res.Header.Get("X-Content-Type-Options"); v != "nosniff" {
		t.Errorf("X-Content-Type-Options = %q", v)
	}
	if v := res.Header.Get("Content-Security-Policy"); v != "frame-ancestors 'self'" {
		t.Errorf("CSP = %q, want Jupyter's kept", v)
	}
	if v := res.Header.Get("Clear-Site-Data"); v != "" {
		t.Errorf("Clear-Site-Data leaked: %q", v)
	}
}

func TestResolveErrors(t *testing.T) {
	f := newFixture(t, http.NotFoundHandler(), nil)
	res, _ := f.do("GET", "/wb/missing/lab", nil, "")
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("missing: %d, want 404", res.StatusCode)
	}
	res, body := f.do("GET", "/wb/stopped/lab", map[string]string{"Accept": "text/html"}, "")
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "not running") ||
		!strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Errorf("stopped: %d %q %q", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	if f.upHits.Load() != 0 {
		t.Error("upstream was contacted")
	}
}

func TestBadPathsAre404(t *testing.T) {
	f := newFixture(t, http.NotFoundHandler(), nil)
	for _, p := range []string{
		"/wb/../x/",
		"/wb/UPPER/",
		"/wb/",
		"/wb//lab",
		"/wb/a_b/",
		"/wb/a%2Fb/",
		"/wb/%61bc/",
		"/wb/abc/../other/lab",
		"/wb/abc/..%2F..%2Fother/lab",
		"/wb/abc/%2E%2E/other/",
		"/wb/" + strings.Repeat("a", 65) + "/",
		"/other/abc/",
	} {
		res, _ := f.do("GET", p, nil, "")
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, res.StatusCode)
		}
	}
	if n := f.resolves.Load(); n != 0 {
		t.Errorf("resolver called %d times for bad paths", n)
	}
	if f.upHits.Load() != 0 {
		t.Error("upstream was contacted")
	}
	// Dot segments that stay inside the workbench are fine.
	res, _ := f.do("GET", "/wb/abc/x/../lab", nil, "")
	if res.StatusCode != http.StatusNotFound || f.upHits.Load() != 1 {
		t.Errorf("inner dot segment: status %d hits %d, want forwarded", res.StatusCode, f.upHits.Load())
	}
}

func TestDialFailureIs502(t *testing.T) {
	f := newFixture(t, http.NotFoundHandler(), nil)
	f.up.Close() // Jupyter not listening yet
	res, body := f.do("GET", "/wb/abc/lab", nil, "")
	if res.StatusCode != http.StatusBadGateway || !strings.Contains(body, "JupyterLab is not answering yet") {
		t.Fatalf("got %d %q", res.StatusCode, body)
	}
}

func TestActivityPerRequest(t *testing.T) {
	f := newFixture(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), nil)
	for range 3 {
		f.do("GET", "/wb/abc/api/kernels", nil, "")
	}
	f.do("GET", "/wb/missing/api/kernels", nil, "")
	if n := f.activityCount(); n != 3 {
		t.Errorf("OnActivity called %d times, want 3", n)
	}
}
