package proxy

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

func TestScopedTokenFromHeaderOrQuery(t *testing.T) {
	cases := []struct {
		authz, query string
		want         string
	}{
		{authz: "token wbk_abc", want: "wbk_abc"},
		{authz: "Token  wbk_abc ", want: "wbk_abc"},
		{authz: "Bearer wbk_abc", want: "wbk_abc"},
		{query: "token=wbk_q&x=1", want: "wbk_q"},
		{query: "x=1&token=jupyterown&token=wbk_q2", want: "wbk_q2"},
		{authz: "token jupyterown"},       // Jupyter's own token: not ours
		{query: "token=jupyterown"},       // likewise
		{authz: "Basic d2JrX2FiYzp4"},     // another scheme
		{query: "notatoken=wbk_x"},        // another parameter
		{authz: "token wbt_apitoken"},     // a portal API token is not a workbench token
		{authz: "token", query: "a=wbk_"}, // nothing
	}
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodGet, "/wb/a/api?"+c.query, nil)
		if c.authz != "" {
			r.Header.Set("Authorization", c.authz)
		}
		got, ok := ScopedToken(r, "wbk_")
		if got != c.want || ok != (c.want != "") {
			t.Errorf("ScopedToken(%q, %q) = %q, %v; want %q", c.authz, c.query, got, ok, c.want)
		}
	}
	r := httptest.NewRequest(http.MethodGet, "/wb/a/?token=wbk_x", nil)
	if _, ok := ScopedToken(r, ""); ok {
		t.Error("no prefix configured must recognise nothing")
	}
}

func TestStripScopedQueryKeepsTheRest(t *testing.T) {
	cases := map[string]string{
		"token=wbk_a":                         "",
		"a=1&token=wbk_a&b=%2F":               "a=1&b=%2F",
		"token=wbk%5Fa&session_id=x":          "session_id=x", // escaped prefix
		"token=jupyterown&a=1":                "token=jupyterown&a=1",
		"a=1&b=2":                             "a=1&b=2",
		"token=wbk_a&token=wbk_b&kernel=k%20": "kernel=k%20",
	}
	for in, want := range cases {
		u := &url.URL{Path: "/wb/a/", RawQuery: in}
		stripScopedQuery(u, "wbk_")
		if u.RawQuery != want {
			t.Errorf("stripScopedQuery(%q) = %q, want %q", in, u.RawQuery, want)
		}
	}
}

// TestScopedTokenRequests: a request carrying a scoped token reaches the
// upstream without it (Authorization replaced by the workbench's Jupyter
// token, the query parameter removed), passes without an Origin (a
// WebSocket client outside the browser sends none), and its response is
// sandboxed so no script runs in the portal's origin.
func TestScopedTokenRequests(t *testing.T) {
	got := make(chan *http.Request, 4)
	f := newFixture(t, echoHeaders(got), func(o *Options) { o.ScopedTokenPrefix = "wbk_" })

	res, _ := f.do(http.MethodPost, "/wb/w1/api/kernels?token=wbk_secret&x=1", map[string]string{"Origin": "https://evil.example"}, "{}")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST with scoped token from another origin: %d, want 200 (token auth is not ambient)", res.StatusCode)
	}
	up := <-got
	if up.URL.RawQuery != "x=1" {
		t.Errorf("upstream query %q, want the token removed and x=1 kept", up.URL.RawQuery)
	}
	if a := up.Header.Get("Authorization"); a != "token tok-w1" {
		t.Errorf("upstream Authorization %q, want the workbench's Jupyter token", a)
	}
	if csp := res.Header.Get("Content-Security-Policy"); csp != "sandbox" {
		t.Errorf("Content-Security-Policy %q, want sandbox on a token-authenticated response", csp)
	}

	res, _ = f.do(http.MethodGet, "/wb/w1/lab", map[string]string{"Authorization": "token wbk_secret"}, "")
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Security-Policy") != "sandbox" {
		t.Fatalf("GET with header token: %d csp=%q", res.StatusCode, res.Header.Get("Content-Security-Policy"))
	}
	if a := (<-got).Header.Get("Authorization"); a != "token tok-w1" {
		t.Errorf("upstream Authorization %q: the scoped token must not reach the container", a)
	}

	// A page cannot load script or styles with a token: any user could
	// serve script from the portal's origin with their own (the sandbox
	// policy does nothing to a <script src>). A document still opens.
	for _, dest := range []string{"script", "style", "worker", "serviceworker"} {
		res, _ = f.do(http.MethodGet, "/wb/w1/files/evil.js?token=wbk_secret", map[string]string{"Sec-Fetch-Dest": dest}, "")
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("token request for a %s: %d, want 403", dest, res.StatusCode)
			<-got // it reached the upstream
		}
	}
	res, _ = f.do(http.MethodGet, "/wb/w1/files/notes.txt?token=wbk_secret", map[string]string{"Sec-Fetch-Dest": "document"}, "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("token request for a document: %d, want 200", res.StatusCode)
	}
	<-got

	// Without a scoped token the CSRF check stands, and Jupyter's own
	// ?token= passes through untouched.
	res, _ = f.do(http.MethodPost, "/wb/w1/api/kernels?token=jupyterown", map[string]string{"Origin": "https://evil.example"}, "{}")
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-origin POST without scoped token: %d, want 403", res.StatusCode)
	}
	res, _ = f.do(http.MethodGet, "/wb/w1/api/kernels?token=jupyterown", nil, "")
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Security-Policy") != "" {
		t.Fatalf("plain GET: %d csp=%q", res.StatusCode, res.Header.Get("Content-Security-Policy"))
	}
	if q := (<-got).URL.RawQuery; q != "token=jupyterown" {
		t.Errorf("upstream query %q, want Jupyter's own token kept", q)
	}
}

// A token link does not send its visitor off the portal: the redirect a
// notebook answers with to another site loses its Location (any user could
// make a link on the portal's address that lands on their phishing page);
// Jupyter's own redirects, to a path, pass. A session's requests are the
// owner's own business and pass as they are.
func TestScopedTokenResponseDoesNotRedirectOffSite(t *testing.T) {
	for _, leanPath := range []bool{true, false} {
		up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, r.URL.Query().Get("loc"), http.StatusFound)
		})
		f := newFixture(t, up, func(o *Options) { o.ScopedTokenPrefix = "wbk_"; o.ReverseProxyOnly = !leanPath })
		for _, loc := range []string{"https://evil.example/phish", "//evil.example/phish", `/\evil.example/phish`, "HTTPS://evil.example/"} {
			res, _ := f.do(http.MethodGet, "/wb/w1/x?token=wbk_secret&loc="+url.QueryEscape(loc), nil, "")
			if got := res.Header.Get("Location"); got != "" {
				t.Errorf("lean=%v: token request redirected to %q (from %q)", leanPath, got, loc)
			}
		}
		res, _ := f.do(http.MethodGet, "/wb/w1/x?token=wbk_secret&loc="+url.QueryEscape("/wb/w1/lab"), nil, "")
		if got := res.Header.Get("Location"); got != "/wb/w1/lab" {
			t.Errorf("lean=%v: Jupyter's redirect to a path: Location %q", leanPath, got)
		}
		res, _ = f.do(http.MethodGet, "/wb/w1/x?loc="+url.QueryEscape("https://example.org/docs"), nil, "")
		if got := res.Header.Get("Location"); got != "https://example.org/docs" {
			t.Errorf("lean=%v: the owner's own request: Location %q", leanPath, got)
		}
	}
}

// A page opened with its token in the address names that address as the
// Referer of what it loads next; the container gets the Referer without
// the token (on both upstream paths), other parameters kept, and a Referer
// without a scoped token as it came.
func TestScopedTokenNotSentUpstreamInReferer(t *testing.T) {
	for _, leanPath := range []bool{true, false} {
		got := make(chan *http.Request, 4)
		f := newFixture(t, echoHeaders(got), func(o *Options) { o.ScopedTokenPrefix = "wbk_"; o.ReverseProxyOnly = !leanPath })
		for ref, want := range map[string]string{
			"http://portal.example/wb/w1/?token=wbk_secret&x=1": "http://portal.example/wb/w1/?x=1",
			"http://portal.example/wb/w1/tree?token=wbk_secret": "http://portal.example/wb/w1/tree",
			"http://portal.example/wb/w1/?token=jupyterown":     "http://portal.example/wb/w1/?token=jupyterown",
		} {
			res, _ := f.do(http.MethodGet, "/wb/w1/static/app.js", map[string]string{"Referer": ref}, "")
			if res.StatusCode != http.StatusOK {
				t.Fatalf("lean=%v: GET: %d", leanPath, res.StatusCode)
			}
			if up := (<-got).Header.Get("Referer"); up != want {
				t.Errorf("lean=%v: Referer %q reached the container as %q, want %q", leanPath, ref, up, want)
			}
		}
	}
}
