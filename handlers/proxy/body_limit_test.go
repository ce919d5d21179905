package proxy

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// bodyRecorder is an upstream "Jupyter" that reads each request's whole
// body before it answers (as tornado does) and records what arrived.
type bodyRecorder struct {
	mu       sync.Mutex
	complete []int // lengths of the bodies read to their end
	cut      int   // bodies whose reading failed (the connection was dropped)
}

func (b *bodyRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n, err := io.Copy(io.Discard, r.Body)
	b.mu.Lock()
	if err != nil {
		b.cut++
	} else {
		b.complete = append(b.complete, int(n))
	}
	b.mu.Unlock()
	if err != nil {
		return
	}
	w.WriteHeader(http.StatusCreated)
}

func (b *bodyRecorder) completed() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]int(nil), b.complete...)
}

// putBody sends a PUT of n bytes with the given headers; chunked sends it
// without a length.
func putBody(t *testing.T, f *fixture, n int, chunked bool, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	var body io.Reader = strings.NewReader(strings.Repeat("x", n))
	if chunked {
		body = io.MultiReader(body) // no length known to the client: chunked
	}
	req, _ := http.NewRequest(http.MethodPut, f.front.URL+"/wb/abc/api/contents/big.bin", body)
	req.Header.Set("Origin", f.front.URL)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("PUT %d bytes: %v", n, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// tooLargeJSON checks a 413 in the JSON a token client gets: the portal
// API's code and the limit, and Jupyter's "message" saying what to do.
func tooLargeJSON(t *testing.T, res *http.Response, body string, limit int64) {
	t.Helper()
	var got struct {
		Error struct {
			Code       string
			Message    string
			LimitBytes int64 `json:"limit_bytes"`
		}
		Message, Reason string
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil || res.StatusCode != http.StatusRequestEntityTooLarge ||
		!strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("%d %s %q (%v), want 413 JSON", res.StatusCode, res.Header.Get("Content-Type"), body, err)
	}
	if got.Error.Code != "body_too_large" || got.Error.LimitBytes != limit {
		t.Errorf("error %+v, want code body_too_large and limit_bytes %d", got.Error, limit)
	}
	if !strings.Contains(got.Message, formatBytes(limit)) || !strings.Contains(got.Message, "chunk") || got.Reason != "Upload too large" {
		t.Errorf("message %q reason %q: want the limit and the way to send big files", got.Message, got.Reason)
	}
}

// A body that declares more than the limit is answered 413, in either
// upstream path, before any of it goes to Jupyter (which closed the
// connection with a bare 400); one of exactly the limit goes through.
func TestBodyOverLimitRefusedBeforeForwarding(t *testing.T) {
	for _, c := range []struct {
		name   string
		limit  int64
		rpOnly bool
	}{
		{"lean", 1000, false},                         // small bodies take the lean path
		{"reverseproxy", 1000, true},                  // --proxy-upstream reverseproxy
		{"large body in lean mode", 100 << 10, false}, // over maxLeanBody: ReverseProxy
	} {
		t.Run(c.name, func(t *testing.T) {
			up := &bodyRecorder{}
			f := newFixture(t, up, func(o *Options) { o.MaxBody = c.limit; o.ReverseProxyOnly = c.rpOnly })
			tok := map[string]string{"Authorization": "token wbt_script"}

			res, body := putBody(t, f, int(c.limit), false, tok)
			if res.StatusCode != http.StatusCreated {
				t.Fatalf("a body of exactly the limit: %d %q", res.StatusCode, body)
			}
			hits := f.upHits.Load()

			res, body = putBody(t, f, int(c.limit)+1, false, tok)
			tooLargeJSON(t, res, body, c.limit)
			if n := f.upHits.Load(); n != hits {
				t.Errorf("the upstream got %d requests for the body over the limit, want none", n-hits)
			}
			if got := up.completed(); len(got) != 1 || got[0] != int(c.limit) {
				t.Errorf("bodies the upstream read: %v, want only the one of %d", got, c.limit)
			}
		})
	}
}

// A browser navigation gets the 413 as a page, a client without a token
// as plain text, as the proxy's other refusals; with the portal's SSH on,
// the message names scp and sftp too.
func TestBodyOverLimitAnswerByClient(t *testing.T) {
	f := newFixture(t, &bodyRecorder{}, func(o *Options) { o.MaxBody = 2 << 10; o.SSH = true })
	res, body := putBody(t, f, 2<<10+1, false, map[string]string{"Accept": "text/html"})
	if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(body, "<h1>Upload too large</h1>") || !strings.Contains(body, "2 KiB") || !strings.Contains(body, "scp") {
		t.Errorf("navigation: %d %s %q", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	res, body = putBody(t, f, 2<<10+1, false, nil)
	if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") ||
		!strings.HasPrefix(body, "Upload too large: ") || !strings.Contains(body, "sftp") {
		t.Errorf("plain client: %d %s %q", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	if f.upHits.Load() != 0 {
		t.Errorf("the upstream got %d requests", f.upHits.Load())
	}
	if p := New(Options{Resolve: func(*http.Request, string) (Target, error) { return Target{}, nil }}); p.maxBody != 512<<20 {
		t.Errorf("default limit %d, want Jupyter's 512 MiB", p.maxBody)
	}
}

// A body sent without a length (chunked) is counted on its way: at one
// byte over the limit the upstream connection is dropped, the upstream
// never has a complete request, and the client gets the same 413.
func TestChunkedBodyOverLimitIsCut(t *testing.T) {
	up := &bodyRecorder{}
	f := newFixture(t, up, func(o *Options) { o.MaxBody = 100 << 10 })
	tok := map[string]string{"Authorization": "token wbt_script"}
	res, body := putBody(t, f, 100<<10, true, tok)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("a chunked body of exactly the limit: %d %q", res.StatusCode, body)
	}
	res, body = putBody(t, f, 100<<10+1, true, tok)
	tooLargeJSON(t, res, body, 100<<10)
	if got := up.completed(); len(got) != 1 || got[0] != 100<<10 {
		t.Errorf("bodies the upstream read to their end: %v, want only the one at the limit", got)
	}
}

// An extra port's app is not Jupyter: its bodies are not held to
// Jupyter's limit.
func TestExtraPortBodyNotLimited(t *testing.T) {
	up := &bodyRecorder{}
	f := newFixture(t, up, func(o *Options) {
		o.MaxBody = 1000
		inner := o.Resolve
		o.Resolve = func(r *http.Request, id string) (Target, error) {
			t, err := inner(r, id)
			t.StripPrefix = "/wb/abc/port/6006"
			return t, err
		}
	})
	req, _ := http.NewRequest(http.MethodPut, f.front.URL+"/wb/abc/port/6006/upload", strings.NewReader(strings.Repeat("x", 5000)))
	req.Header.Set("Origin", f.front.URL)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Errorf("an extra port's upload: %d, want it passed on", res.StatusCode)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{512 << 20: "512 MiB", 2 << 10: "2 KiB", 1000: "1000 B", 1<<20 + 1: "1048577 B"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
	if !bodyTooLarge(&http.MaxBytesError{Limit: 1}) || bodyTooLarge(errors.New("x")) || bodyTooLarge(&url.Error{Err: io.EOF}) {
		t.Error("bodyTooLarge")
	}
}

// A client that sends its whole body before it reads the answer (as
// browsers and most HTTP libraries do) gets the 413, not a reset: the
// proxy reads and drops the rest of a refused body before it closes the
// connection, whether the body declared its length or was counted on its
// way (chunked). Without that, the client's write stalled once the socket
// buffers were full and ended in "connection reset by peer" when the
// portal closed, which dropped the 413 the client had not read yet.
func TestBodyOverLimitClientThatSendsEverythingFirstGetsThe413(t *testing.T) {
	for _, chunked := range []bool{false, true} {
		t.Run(map[bool]string{false: "content-length", true: "chunked"}[chunked], func(t *testing.T) {
			up := &bodyRecorder{}
			f := newFixture(t, up, func(o *Options) { o.MaxBody = 1 << 20 })
			const size = 64 << 20 // far more than loopback's socket buffers hold
			conn, err := net.Dial("tcp", strings.TrimPrefix(f.front.URL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			framing := "Content-Length: " + strconv.Itoa(size)
			if chunked {
				framing = "Transfer-Encoding: chunked"
			}
			head := "PUT /wb/abc/api/contents/big.bin HTTP/1.1\r\nHost: " + strings.TrimPrefix(f.front.URL, "http://") +
				"\r\nOrigin: " + f.front.URL + "\r\nAuthorization: token wbt_script\r\n" + framing + "\r\n\r\n"
			if _, err := io.WriteString(conn, head); err != nil {
				t.Fatal(err)
			}
			chunk := make([]byte, 1<<20)
			for sent := 0; sent < size; sent += len(chunk) {
				if chunked {
					_, err = fmt.Fprintf(conn, "%x\r\n", len(chunk))
				}
				if err == nil {
					_, err = conn.Write(chunk)
				}
				if err == nil && chunked {
					_, err = io.WriteString(conn, "\r\n")
				}
				if err != nil {
					t.Fatalf("sending the body, after %d MiB: %v (the proxy closed without reading it)", sent>>20, err)
				}
			}
			if chunked {
				if _, err := io.WriteString(conn, "0\r\n\r\n"); err != nil {
					t.Fatalf("ending the chunked body: %v", err)
				}
			}
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("reading the answer after sending the body: %v", err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			tooLargeJSON(t, res, string(b), 1<<20)
			if chunked {
				// A chunked body goes upstream as it comes, up to the limit;
				// the upstream never has all of it.
				if got := up.completed(); len(got) != 0 {
					t.Errorf("bodies the upstream read to their end: %v", got)
				}
			} else if f.upHits.Load() != 0 {
				t.Errorf("the upstream got %d requests", f.upHits.Load())
			}
		})
	}
}

// closeCounter is a client body that counts its Close calls.
type closeCounter struct {
	io.Reader
	closed int
}

func (c *closeCounter) Close() error { c.closed++; return nil }

// The cap passes a body of exactly the limit with its EOF, fails one byte
// over with the limit in the error, and leaves the client's body open
// once over (for the 413 to read the rest), closing it otherwise.
func TestCappedBody(t *testing.T) {
	at := &closeCounter{Reader: strings.NewReader(strings.Repeat("x", 10))}
	c := &cappedBody{client: at, limit: 10, left: 10}
	if b, err := io.ReadAll(c); err != nil || len(b) != 10 {
		t.Fatalf("a body of the limit: %d bytes, %v", len(b), err)
	}
	c.Close()
	if at.closed != 1 {
		t.Errorf("a body within the limit: closed %d times, want 1", at.closed)
	}
	over := &closeCounter{Reader: strings.NewReader(strings.Repeat("x", 25))}
	c = &cappedBody{client: over, limit: 10, left: 10}
	b, err := io.ReadAll(c)
	var tl *http.MaxBytesError
	if !errors.As(err, &tl) || tl.Limit != 10 || len(b) != 10 {
		t.Fatalf("a body over the limit: %d bytes, %v", len(b), err)
	}
	if _, err := c.Read(make([]byte, 4)); !bodyTooLarge(err) {
		t.Errorf("a read after the cut: %v, want the same error", err)
	}
	c.Close()
	rest, _ := io.ReadAll(over)
	if over.closed != 0 || len(rest) != 14 {
		t.Errorf("after the cut: closed %d times, %d bytes left to read; want open, 14", over.closed, len(rest))
	}
}
