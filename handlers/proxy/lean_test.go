package proxy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Tests of the lean upstream path (lean.go): connection reuse, bodies of
// every framing, retries on connections the server closed, clients that
// go away, and that it sends and answers exactly what the ReverseProxy
// path does.

// connTracker records the upstream connections (by the proxy's local
// address) that requests arrived on.
type connTracker struct {
	mu    sync.Mutex
	conns map[string]int
}

func (c *connTracker) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		if c.conns == nil {
			c.conns = map[string]int{}
		}
		c.conns[r.RemoteAddr]++
		c.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (c *connTracker) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.conns)
}

func proxyOf(f *fixture) *Proxy { return f.front.Config.Handler.(*Proxy) }

func upHost(f *fixture) string { return strings.TrimPrefix(f.up.URL, "http://") }

// get sends a request through the proxy on a client of its own and
// returns the status and body.
func get(t *testing.T, c *http.Client, method, u string, body string) (*http.Response, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, u, rd)
	req.Header.Set("Origin", strings.Join(strings.SplitN(u, "/", 4)[:3], "/"))
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: body: %v", method, u, err)
	}
	return res, string(b)
}

// framings answers by path: a Content-Length body, a chunked one, HEAD,
// 204 and 304 without a body, and a POST echo.
func framings() http.Handler {
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch path := strings.TrimPrefix(r.URL.Path, "/wb/abc/"); path {
		case "length":
			w.Header().Set("Content-Length", "5")
			io.WriteString(w, "hello")
		case "chunked":
			for i := range 3 {
				fmt.Fprintf(w, "part%d;", i)
				w.(http.Flusher).Flush()
			}
		case "large":
			w.Write(big)
		case "large-chunked":
			for i := 0; i < len(big); i += 100_000 {
				w.Write(big[i:min(i+100_000, len(big))])
				w.(http.Flusher).Flush()
			}
		case "nocontent":
			w.WriteHeader(http.StatusNoContent)
		case "notmodified":
			w.Header().Set("ETag", `"x"`)
			w.WriteHeader(http.StatusNotModified)
		case "echo":
			b, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%s %d %s", r.Method, r.ContentLength, b)
		default:
			http.NotFound(w, r)
		}
	})
}

func TestLeanKeepAliveAndFramings(t *testing.T) {
	var ct connTracker
	f := newFixture(t, ct.wrap(framings()), nil)
	c := &http.Client{}
	base := f.front.URL + "/wb/abc/"
	big := strings.Repeat("0123456789abcdef", 1<<16)
	for range 3 {
		for _, tc := range []struct{ method, path, body, want string }{
			{"GET", "length", "", "hello"},
			{"GET", "chunked", "", "part0;part1;part2;"},
			{"HEAD", "length", "", ""},
			{"GET", "nocontent", "", ""},
			{"GET", "notmodified", "", ""},
			{"POST", "echo", "a=1&b=2", "POST 7 a=1&b=2"},
			{"DELETE", "echo", "", "DELETE 0 "},
			{"GET", "large", "", big},
			{"GET", "large-chunked", "", big},
		} {
			res, body := get(t, c, tc.method, base+tc.path, tc.body)
			if res.StatusCode >= 400 || body != tc.want {
				t.Fatalf("%s %s: %d, body %d bytes %.40q, want %.40q", tc.method, tc.path, res.StatusCode, len(body), body, tc.want)
			}
			if tc.method == "HEAD" && res.ContentLength != 5 {
				t.Errorf("HEAD: Content-Length %d, want 5", res.ContentLength)
			}
		}
	}
	if n := ct.count(); n != 1 {
		t.Errorf("27 sequential requests used %d upstream connections, want 1", n)
	}
	if n := proxyOf(f).pool.idleCount(upHost(f)); n != 1 {
		t.Errorf("%d idle upstream connections, want 1", n)
	}
}

// A pooled connection the server closed while idle: an idempotent request
// goes again on a new one; a POST is never sent on it.
func TestLeanServerClosedIdleConnection(t *testing.T) {
	var ct connTracker
	f := newFixture(t, ct.wrap(framings()), nil)
	// A new client connection each time: only the proxy's upstream
	// connection is reused.
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	base := f.front.URL + "/wb/abc/"
	for i, method := range []string{"GET", "POST", "HEAD", "PUT"} {
		if res, _ := get(t, c, method, base+"echo", ""); res.StatusCode != 200 {
			t.Fatalf("warm-up: %d", res.StatusCode)
		}
		// Closes the proxy's idle upstream connection.
		f.up.CloseClientConnections()
		res, body := get(t, c, method, base+"echo", "")
		if want := method + " 0 "; res.StatusCode != 200 || (method != "HEAD" && body != want) {
			t.Fatalf("%s after the server closed the pooled connection: %d %q, want 200 %q", method, res.StatusCode, body, want)
		}
		// One new connection each time: the one dialled for the
		// retry is the next warm-up's.
		if n, want := ct.count(), i+2; n != want {
			t.Errorf("after %s: %d upstream connections, want %d", method, n, want)
		}
	}
	if hits, want := f.upHits.Load(), int64(8); hits != want {
		t.Errorf("upstream saw %d requests, want %d: none twice", hits, want)
	}
}

// A server that takes a request and closes without answering: a GET on a
// reused connection is tried once more on a new one, a POST never (it may
// have been acted on); both end in 502.
func TestLeanNoRetryAfterServerSawRequest(t *testing.T) {
	f := newFixture(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/drop") {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		io.WriteString(w, "ok")
	}), nil)
	c := &http.Client{}
	base := f.front.URL + "/wb/abc/"
	for _, tc := range []struct {
		method string
		hits   int64
	}{{"GET", 2}, {"POST", 1}} {
		get(t, c, "GET", base+"ok", "") // a pooled connection to reuse
		before := f.upHits.Load()
		res, _ := get(t, c, tc.method, base+"drop", "")
		if res.StatusCode != http.StatusBadGateway {
			t.Errorf("%s drop: %d, want 502", tc.method, res.StatusCode)
		}
		if hits := f.upHits.Load() - before; hits != tc.hits {
			t.Errorf("%s drop reached the upstream %d times, want %d", tc.method, hits, tc.hits)
		}
	}
}

// A client that goes away mid-body: the upstream request is ended and its
// connection is not pooled.
func TestLeanClientGoneMidBody(t *testing.T) {
	upDone := make(chan struct{})
	f := newFixture(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(upDone)
		chunk := bytes.Repeat([]byte("x"), 32<<10)
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}), nil)
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.front.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(conn, "GET /wb/abc/stream HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(res.Body, make([]byte, 100<<10)); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	select {
	case <-upDone:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream kept streaming 10 s after the client went away")
	}
	if n := proxyOf(f).pool.idleCount(upHost(f)); n != 0 {
		t.Errorf("%d idle upstream connections, want 0: a cut-off one went back to the pool", n)
	}
}

// Revocation ends a long poll on the lean path as on the other.
func TestLeanRevocationEndsLongPoll(t *testing.T) {
	arrived := make(chan struct{})
	f, live := liveFixture(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done()
	}))
	errc := make(chan error, 1)
	go func() {
		res, err := http.Get(f.front.URL + "/wb/abc/api/events")
		if err == nil {
			_, err = io.ReadAll(res.Body)
			res.Body.Close()
			if err == nil {
				err = fmt.Errorf("status %d", res.StatusCode)
			}
		}
		errc <- err
	}()
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the long poll never reached the upstream")
	}
	if n := live.CloseUser(7); n != 1 {
		t.Fatalf("CloseUser ended %d requests, want 1", n)
	}
	select {
	case err := <-errc:
		t.Logf("long poll ended: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("the long poll outlived its revocation by 5 s")
	}
}

// More concurrent requests than the pool keeps: each gets a connection,
// and only maxIdle stay.
func TestLeanConcurrentBeyondPool(t *testing.T) {
	const n = 24
	var mu sync.Mutex
	waiting := 0
	all := make(chan struct{})
	var ct connTracker
	f := newFixture(t, ct.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		waiting++
		if waiting == n {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-time.After(10 * time.Second):
		}
		io.WriteString(w, r.URL.Query().Get("i"))
	})), nil)
	proxyOf(f).pool.maxIdle = 4
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			res, body := get(t, c, "GET", fmt.Sprintf("%s/wb/abc/x?i=%d", f.front.URL, i), "")
			if res.StatusCode != 200 || body != fmt.Sprint(i) {
				t.Errorf("request %d: %d %q", i, res.StatusCode, body)
			}
		})
	}
	wg.Wait()
	select {
	case <-all:
	default:
		t.Fatal("the requests were not all in flight at once")
	}
	if got := ct.count(); got != n {
		t.Errorf("%d upstream connections for %d concurrent requests", got, n)
	}
	if idle := proxyOf(f).pool.idleCount(upHost(f)); idle != 4 {
		t.Errorf("%d idle connections, want the pool's 4", idle)
	}
}

// An HTTP/1.0 server (no keep-alive): the answer comes through, the
// connection is not pooled.
func TestLeanHTTP10Upstream(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				if _, err := http.ReadRequest(bufio.NewReader(conn)); err != nil {
					return
				}
				io.WriteString(conn, "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nold server")
			}()
		}
	}()
	f := newFixture(t, http.NotFoundHandler(), func(o *Options) {
		o.Resolve = func(*http.Request, string) (Target, error) {
			return Target{BaseURL: &url.URL{Scheme: "http", Host: ln.Addr().String()}}, nil
		}
	})
	for range 2 {
		res, body := get(t, &http.Client{}, "GET", f.front.URL+"/wb/abc/x", "")
		if res.StatusCode != 200 || body != "old server" {
			t.Fatalf("got %d %q", res.StatusCode, body)
		}
	}
	if n := proxyOf(f).pool.idleCount(ln.Addr().String()); n != 0 {
		t.Errorf("%d idle connections to an HTTP/1.0 server", n)
	}
}

// seen is what an upstream received, and what the client got back.
type seen struct {
	uri, host, body string
	hdr             http.Header
	status          int
	resHdr          http.Header
	resBody         string
}

// TestLeanSameAsReverseProxy sends the same requests through both paths
// and compares what Jupyter received and what the client got.
func TestLeanSameAsReverseProxy(t *testing.T) {
	got := make(chan seen, 1)
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{uri: r.RequestURI, host: r.Host, body: string(b), hdr: r.Header.Clone()}
		h := w.Header()
		h.Add("Set-Cookie", "wbsession=evil; Path=/")
		h.Set("Service-Worker-Allowed", "/")
		h.Set("Clear-Site-Data", `"cookies"`)
		h.Set("Connection", "X-Hop")
		h.Set("X-Hop", "1")
		h.Set("Keep-Alive", "timeout=5")
		h.Add("X-Multi", "a")
		h.Add("X-Multi", "b")
		h.Set("Content-Security-Policy", "frame-ancestors 'self'")
		h.Set("X-Content-Type-Options", "whatever")
		if r.URL.Query().Get("stream") != "" {
			h.Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: 1\n\n")
			return
		}
		io.WriteString(w, "answer")
	})
	requests := []struct {
		method, target, body string
		hdr                  map[string][]string
	}{
		{"GET", "/wb/abc/api/contents/a%2Fb%20c?content=1&x=%2F&y=a+b", "", map[string][]string{
			"Cookie":              {"wbsession=secret; _xsrf=2|abc", "other=1"},
			"Authorization":       {"Bearer portal-api-token"},
			"X-Forwarded-For":     {"6.6.6.6"},
			"X-Forwarded-Prefix":  {"/evil"},
			"Forwarded":           {"for=6.6.6.6"},
			"X-Real-Ip":           {"6.6.6.6"},
			"Connection":          {"keep-alive, X-Secret-Hop"},
			"X-Secret-Hop":        {"1"},
			"Keep-Alive":          {"300"},
			"Proxy-Authorization": {"Basic eA=="},
			"User-Agent":          {"test-agent"},
			"Accept-Encoding":     {"gzip, br"},
			"X-Multi":             {"1", "2"},
		}},
		{"GET", "/wb/abc/lab", "", map[string][]string{"Cookie": {"wbsession=only"}, "User-Agent": {""}}},
		{"POST", "/wb/abc/api/sessions", `{"kernel":{}}`, map[string][]string{
			"Content-Type": {"application/json"}, "Origin": {"ORIGIN"}, "Sec-Fetch-Site": {"same-origin"}}},
		{"DELETE", "/wb/abc/api/sessions/1", "", map[string][]string{"Origin": {"ORIGIN"}}},
		{"GET", "/wb/abc/api/events?stream=1", "", nil},
		{"GET", "/wb/abc/x?token=wbk_secret&a=1&token=jupyter", "", nil},
		{"GET", "/wb/abc/x", "", map[string][]string{"Authorization": {"token wbk_secret"}}},
		{"HEAD", "/wb/abc/x", "", nil},
	}
	run := func(rp bool) []seen {
		f := newFixture(t, upstream, func(o *Options) {
			o.ReverseProxyOnly = rp
			o.ScopedTokenPrefix = "wbk_"
		})
		var out []seen
		for _, rq := range requests {
			req, _ := http.NewRequest(rq.method, f.front.URL, strings.NewReader(rq.body))
			req.URL.Opaque = rq.target
			for k, vv := range rq.hdr {
				for _, v := range vv {
					req.Header.Add(k, strings.ReplaceAll(v, "ORIGIN", f.front.URL))
				}
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			var s seen
			select {
			case s = <-got:
			case <-time.After(5 * time.Second):
				t.Fatalf("%s %s did not reach the upstream (%d)", rq.method, rq.target, res.StatusCode)
			}
			s.status, s.resHdr, s.resBody = res.StatusCode, res.Header, string(b)
			// What differs by nature: the proxy's address and port.
			s.host = strings.Replace(s.host, strings.TrimPrefix(f.front.URL, "http://"), "FRONT", 1)
			s.hdr.Set("X-Forwarded-Host", strings.Replace(s.hdr.Get("X-Forwarded-Host"), strings.TrimPrefix(f.front.URL, "http://"), "FRONT", 1))
			if o := s.hdr.Get("Origin"); o != "" {
				s.hdr.Set("Origin", "ORIGIN")
			}
			s.resHdr.Del("Date")
			out = append(out, s)
		}
		return out
	}
	lean, rp := run(false), run(true)
	for i := range requests {
		l, r := lean[i], rp[i]
		what := requests[i].method + " " + requests[i].target
		if l.uri != r.uri || l.host != r.host || l.body != r.body || l.status != r.status || l.resBody != r.resBody {
			t.Errorf("%s:\n lean %q %q %q -> %d %q\n rp   %q %q %q -> %d %q", what, l.uri, l.host, l.body, l.status, l.resBody, r.uri, r.host, r.body, r.status, r.resBody)
		}
		if !maps.EqualFunc(l.hdr, r.hdr, slices.Equal) {
			t.Errorf("%s: upstream request headers differ:\n lean %v\n rp   %v", what, l.hdr, r.hdr)
		}
		if !maps.EqualFunc(l.resHdr, r.resHdr, slices.Equal) {
			t.Errorf("%s: response headers differ:\n lean %v\n rp   %v", what, l.resHdr, r.resHdr)
		}
	}
	// And what both send is what the portal promises.
	first := lean[0]
	if c := first.hdr.Get("Cookie"); c != "_xsrf=2|abc; other=1" {
		t.Errorf("Cookie upstream %q", c)
	}
	if a := first.hdr.Values("Authorization"); len(a) != 1 || a[0] != "token tok-abc" {
		t.Errorf("Authorization upstream %q", a)
	}
	for _, k := range []string{"X-Secret-Hop", "Keep-Alive", "Proxy-Authorization", "X-Forwarded-Prefix", "Forwarded", "X-Real-Ip"} {
		if v := first.hdr.Values(k); len(v) != 0 {
			t.Errorf("%s reached the upstream: %q", k, v)
		}
	}
	for _, k := range []string{"Set-Cookie", "Service-Worker-Allowed", "Clear-Site-Data", "X-Hop", "Keep-Alive"} {
		if v := first.resHdr.Values(k); len(v) != 0 {
			t.Errorf("%s reached the client: %q", k, v)
		}
	}
	if q := lean[5].uri; q != "/wb/abc/x?a=1&token=jupyter" {
		t.Errorf("scoped token in the query reached the upstream: %q", q)
	}
	if csp := lean[5].resHdr.Get("Content-Security-Policy"); csp != "sandbox" {
		t.Errorf("scoped request's CSP %q, want sandbox", csp)
	}
}

// rawUpstream answers every request on its connections with answer,
// written by hand, and returns its address.
func rawUpstream(t *testing.T, answer func(w io.Writer)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				br := bufio.NewReader(conn)
				for {
					if _, err := http.ReadRequest(br); err != nil {
						return
					}
					answer(conn)
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// A notebook cannot grow the portal's memory with an endless response
// head, nor keep it reading informational answers: both end in 502.
func TestLeanBoundsResponseHead(t *testing.T) {
	for name, answer := range map[string]func(io.Writer){
		"endless header": func(w io.Writer) {
			io.WriteString(w, "HTTP/1.1 200 OK\r\nX-Big: ")
			// Until the proxy hangs up: past the test's 256 KiB limit.
			chunk := []byte(strings.Repeat("a", 32<<10))
			for {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		},
		"endless 103s": func(w io.Writer) {
			for {
				if _, err := io.WriteString(w, "HTTP/1.1 103 Early Hints\r\nLink: </x>; rel=preload\r\n\r\n"); err != nil {
					return
				}
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			addr := rawUpstream(t, answer)
			f := newFixture(t, http.NotFoundHandler(), func(o *Options) {
				o.Resolve = func(*http.Request, string) (Target, error) {
					return Target{BaseURL: &url.URL{Scheme: "http", Host: addr}}, nil
				}
			})
			proxyOf(f).pool.maxHeaderBytes = 256 << 10
			res, _ := get(t, &http.Client{Timeout: 10 * time.Second}, "GET", f.front.URL+"/wb/abc/x", "")
			if res.StatusCode != http.StatusBadGateway {
				t.Errorf("status %d, want 502", res.StatusCode)
			}
			if n := proxyOf(f).pool.idleCount(addr); n != 0 {
				t.Errorf("%d idle connections after a refused answer", n)
			}
		})
	}
}
