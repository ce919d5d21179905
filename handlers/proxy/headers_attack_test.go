package proxy

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"sync"
	"testing"
	"time"
)

// rawUpgrader is an upstream that answers any upgrade with a hand-written
// 101 carrying the headers a hostile notebook would send, then echoes
// bytes. Written by hand so nothing between it and the proxy cleans them.
func rawUpgrader(t *testing.T) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		defer conn.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\n" +
			"Upgrade: " + r.Header.Get("Upgrade") + "\r\n" +
			"Connection: Upgrade\r\n" +
			"Set-Cookie: wbsession=planted; Path=/\r\n" +
			"Set-Cookie: other=1; Path=/\r\n" +
			"Service-Worker-Allowed: /\r\n" +
			"Clear-Site-Data: \"cookies\"\r\n" +
			"X-Kept: yes\r\n\r\n")
		brw.Flush()
		io.Copy(conn, brw)
	})
}

// A WebSocket handshake must not carry a notebook's Set-Cookie (it could
// replace the portal session) or Service-Worker-Allowed to the browser.
func TestUpgradeResponseHeadersStripped(t *testing.T) {
	f := newFixture(t, rawUpgrader(t), nil)
	conn, err := net.Dial("tcp", strings.TrimPrefix(f.front.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(conn, "GET /wb/abc/api/kernels/k/channels HTTP/1.1\r\nHost: "+strings.TrimPrefix(f.front.URL, "http://")+
		"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nOrigin: "+f.front.URL+"\r\nSec-Fetch-Site: same-origin\r\n\r\n")
	br := bufio.NewReader(conn)
	tp := textproto.NewReader(br)
	status, err := tp.ReadLine()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(status, "HTTP/1.1 101") {
		t.Fatalf("status line %q, want 101", status)
	}
	hdr, err := tp.ReadMIMEHeader()
	if err != nil {
		t.Fatal(err)
	}
	if hdr.Get("X-Kept") != "yes" {
		t.Fatalf("the upstream's 101 did not come through: %v", hdr)
	}
	for _, k := range []string{"Set-Cookie", "Service-Worker-Allowed", "Clear-Site-Data"} {
		if v := hdr.Values(k); len(v) != 0 {
			t.Errorf("101 carried %s: %q", k, v)
		}
	}
	// The tunnel still works.
	io.WriteString(conn, "ping")
	buf := make([]byte, 4)
	if _, err := io.ReadFull(br, buf); err != nil || string(buf) != "ping" {
		t.Errorf("echo through the tunnel: %q, %v", buf, err)
	}
}

// Informational responses (103 Early Hints) are forwarded by ReverseProxy
// without ModifyResponse; they must be cleaned too.
func TestInformationalResponseHeadersStripped(t *testing.T) {
	f := newFixture(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Add("Link", "</wb/abc/static/app.js>; rel=preload")
		h.Add("Set-Cookie", "wbsession=planted; Path=/")
		h.Set("Service-Worker-Allowed", "/")
		w.WriteHeader(http.StatusEarlyHints)
		clear(h)
		io.WriteString(w, "ok")
	}), nil)
	var mu sync.Mutex
	var hints []textproto.MIMEHeader
	trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
		mu.Lock()
		defer mu.Unlock()
		hints = append(hints, h)
		return nil
	}}
	req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", f.front.URL+"/wb/abc/lab", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(hints) != 1 || hints[0].Get("Link") == "" {
		t.Fatalf("want one 103 with its Link header, got %v", hints)
	}
	for _, k := range []string{"Set-Cookie", "Service-Worker-Allowed"} {
		if v := hints[0].Values(k); len(v) != 0 {
			t.Errorf("103 carried %s: %q", k, v)
		}
	}
	if v := res.Header.Values("Set-Cookie"); len(v) != 0 {
		t.Errorf("final response carried Set-Cookie %q", v)
	}
}
