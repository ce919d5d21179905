package proxy

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const testCookie = "wbsession"

// fixture is a portal-side proxy in front of one upstream "Jupyter".
type fixture struct {
	t        testing.TB
	up       *httptest.Server
	front    *httptest.Server
	upHits   atomic.Int64 // requests that reached the upstream
	resolves atomic.Int64

	mu       sync.Mutex
	activity []string // workbench ids passed to OnActivity
}

// newFixture starts upstream and proxy. Resolve knows three ids:
// "missing" (ErrNotFound), "stopped" (wrapped ErrNotReady) and anything
// else, which resolves to the upstream with token "tok-<id>".
func newFixture(t testing.TB, upstream http.Handler, mutate func(*Options)) *fixture {
	t.Helper()
	f := &fixture{t: t}
	f.up = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.upHits.Add(1)
		upstream.ServeHTTP(w, r)
	}))
	t.Cleanup(f.up.Close)
	upURL, _ := url.Parse(f.up.URL)
	o := Options{
		Resolve: func(r *http.Request, id string) (Target, error) {
			f.resolves.Add(1)
			switch id {
			case "missing":
				return Target{}, fmt.Errorf("lookup %s: %w", id, ErrNotFound)
			case "stopped":
				return Target{}, fmt.Errorf("lookup %s: %w", id, ErrNotReady)
			}
			return Target{BaseURL: upURL, Token: "tok-" + id}, nil
		},
		OnActivity: func(id string, _ time.Time) {
			f.mu.Lock()
			f.activity = append(f.activity, id)
			f.mu.Unlock()
		},
		SessionCookieName: testCookie,
		Logger:            slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if mutate != nil {
		mutate(&o)
	}
	f.front = httptest.NewServer(New(o))
	t.Cleanup(f.front.Close)
	return f
}

func (f *fixture) activityCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.activity)
}

// do sends a request to the proxy with a raw request target (so the path
// reaches the server exactly as written, dots and escapes included).
func (f *fixture) do(method, target string, hdr map[string]string, body string) (*http.Response, string) {
	f.t.Helper()
	req, err := http.NewRequest(method, f.front.URL, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	req.URL.Opaque = target // sent verbatim as the request-target
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// echoHeaders answers with what it received, for header assertions.
func echoHeaders(got chan<- *http.Request) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Clone(r.Context())
		io.WriteString(w, "ok")
	})
}
