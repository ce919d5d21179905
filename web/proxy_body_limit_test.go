package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"workbench/models"
	"workbench/web"
)

// An upload through the portal's proxy larger than Jupyter takes in one
// request (WORKBENCH_PROXY_MAX_BODY_MIB, Jupyter's max_body_size) is
// answered 413 with the limit and what to do instead, and nothing of it
// reaches the notebook: Jupyter used to close the connection with a bare
// 400. One of exactly the limit goes through.
func TestProxyRefusesBodyOverJupyterLimit(t *testing.T) {
	p := newPortal(t, func(c *web.Config) { c.ProxyMaxBodyMiB = 1; c.SSHAddr = "127.0.0.1:2222" })
	ctx := context.Background()
	tokenFor(t, p, "alice", "user")
	alice, _ := p.srv.Store.UserByUsername(ctx, "alice")

	var hits, bytesIn atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		n, _ := io.Copy(io.Discard, r.Body)
		bytesIn.Add(n)
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(up.Close)
	wb := p.runningRecord(alice, "uploads", models.GPUNeed{})
	if err := p.srv.Store.SetWorkbenchState(ctx, wb.ID, models.StateRunning, 100, "",
		map[string]any{"endpoint": strings.TrimPrefix(up.URL, "http://")}); err != nil {
		t.Fatal(err)
	}
	c := p.client()
	p.login(c, "alice", "alice-password")
	put := func(n int, hdr map[string]string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPut, p.ts.URL+"/wb/"+wb.ID+"/api/contents/data.bin", strings.NewReader(strings.Repeat("x", n)))
		req.Header.Set("Origin", p.ts.URL)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := c.Do(req)
		if err != nil {
			t.Fatalf("PUT %d bytes: %v", n, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}

	if res, body := put(1<<20, nil); res.StatusCode != http.StatusCreated || bytesIn.Load() != 1<<20 {
		t.Fatalf("an upload of exactly 1 MiB: %d %q, %d bytes arrived", res.StatusCode, body, bytesIn.Load())
	}
	before := hits.Load()

	// A client that sends a token (a script, an IDE) gets JSON. 32 MiB,
	// more than loopback's socket buffers hold, so the client is still
	// sending when the answer comes: it must read it (not a reset).
	res, body := put(32<<20, map[string]string{"Authorization": "token from-the-page"})
	var got struct {
		Error struct {
			Code       string
			LimitBytes int64 `json:"limit_bytes"`
		}
		Message string
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil || res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("32 MiB: %d %q (%v), want 413 JSON", res.StatusCode, body, err)
	}
	if got.Error.Code != "body_too_large" || got.Error.LimitBytes != 1<<20 ||
		!strings.Contains(got.Message, "1 MiB") || !strings.Contains(got.Message, "chunk") || !strings.Contains(got.Message, "scp") {
		t.Errorf("32 MiB: %+v, want code, limit and the ways to send big files", got)
	}
	// A client that sends its whole body before it reads (raw, so no
	// library reads the answer early) gets the 413 too: the portal reads
	// the rest of the body before it closes (the ResponseController
	// reaches the connection through every middleware), where a close
	// with the body unread reset the connection and dropped the answer.
	u, _ := url.Parse(p.ts.URL)
	var cookies []string
	for _, ck := range c.Jar.Cookies(u) {
		cookies = append(cookies, ck.Name+"="+ck.Value)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const size = 64 << 20
	fmt.Fprintf(conn, "PUT /wb/%s/api/contents/data.bin HTTP/1.1\r\nHost: %s\r\nOrigin: %s\r\nCookie: %s\r\nContent-Length: %d\r\n\r\n",
		wb.ID, u.Host, p.ts.URL, strings.Join(cookies, "; "), size)
	chunk := make([]byte, 1<<20)
	for sent := 0; sent < size; sent += len(chunk) {
		if _, err := conn.Write(chunk); err != nil {
			t.Fatalf("sending 64 MiB, after %d MiB: %v (the portal closed without reading the body)", sent>>20, err)
		}
	}
	if raw, err := http.ReadResponse(bufio.NewReader(conn), nil); err != nil || raw.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("the answer after sending 64 MiB: %v %v, want 413", raw, err)
	}

	// A browser navigation (a form posted to the notebook) gets a page.
	res, body = put(1<<20+1, map[string]string{"Accept": "text/html"})
	if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, "Upload too large") {
		t.Errorf("one byte over, as a page: %d %q", res.StatusCode, body)
	}
	if n := hits.Load(); n != before {
		t.Errorf("the notebook got %d requests over the limit, want none", n-before)
	}
}

// The setting defaults to Jupyter's own 512 MiB; -1 turns it off; a value
// that is no size stops the start.
func TestProxyMaxBodySetting(t *testing.T) {
	if c := bound(t); c.ProxyMaxBodyMiB != 512 || c.ProxyMaxBody() != 512<<20 {
		t.Errorf("default: %d MiB, %d bytes", c.ProxyMaxBodyMiB, c.ProxyMaxBody())
	}
	t.Setenv("WORKBENCH_PROXY_MAX_BODY_MIB", "-1")
	if c := bound(t); c.Validate() != nil || c.ProxyMaxBody() >= 0 {
		t.Errorf("-1: %v, %d", c.Validate(), c.ProxyMaxBody())
	}
	for _, v := range []string{"-2", "512M"} {
		t.Setenv("WORKBENCH_PROXY_MAX_BODY_MIB", v)
		if c := bound(t); c.Validate() == nil {
			t.Errorf("WORKBENCH_PROXY_MAX_BODY_MIB=%s accepted", v)
		}
	}
}
