package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// wsEcho is an upstream that echoes WebSocket messages. Its default origin
// check compares Origin with Host, as Jupyter does.
func wsEcho() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := r.Context()
		for {
			typ, msg, err := c.Read(ctx)
			if err != nil {
				return
			}
			if err := c.Write(ctx, typ, msg); err != nil {
				return
			}
		}
	})
}

func wsURL(httpURL, path string) string {
	return "ws" + strings.TrimPrefix(httpURL, "http") + path
}

func dialWS(t *testing.T, url string, hdr http.Header) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: hdr})
}

func TestWebSocketEchoSameOrigin(t *testing.T) {
	f := newFixture(t, wsEcho(), func(o *Options) { o.ActivityInterval = time.Nanosecond })
	c, _, err := dialWS(t, wsURL(f.front.URL, "/wb/abc/api/kernels/k1/channels?session_id=s"),
		http.Header{"Origin": {f.front.URL}, "Cookie": {"wbsession=secret"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i := range 5 {
		want := fmt.Sprintf("msg %d", i)
		if err := c.Write(ctx, websocket.MessageText, []byte(want)); err != nil {
			t.Fatal(err)
		}
		_, got, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Fatalf("echo %q, want %q", got, want)
		}
	}
	opened := f.activityCount()
	// Open, plus data in both directions with a 1ns throttle.
	if opened < 3 {
		t.Errorf("OnActivity called %d times after traffic, want open + per-message", opened)
	}
	c.Close(websocket.StatusNormalClosure, "")
	deadline := time.Now().Add(time.Minute) // bounds a hang only
	for f.activityCount() == opened && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if f.activityCount() == opened {
		t.Error("no OnActivity at close")
	}
}

func TestWebSocketCrossOriginRefused(t *testing.T) {
	f := newFixture(t, wsEcho(), nil)
	u := wsURL(f.front.URL, "/wb/abc/api/kernels/k1/channels")
	for name, hdr := range map[string]http.Header{
		"evil origin":            {"Origin": {"https://evil.example"}},
		"no origin":              nil,
		"sec-fetch-site none":    {"Sec-Fetch-Site": {"none"}},
		"sec-fetch-site cross":   {"Sec-Fetch-Site": {"cross-site"}, "Origin": {f.front.URL}},
		"sec-fetch-site sameish": {"Sec-Fetch-Site": {"same-site"}},
	} {
		c, res, err := dialWS(t, u, hdr)
		if err == nil {
			c.CloseNow()
			t.Errorf("%s: upgrade succeeded", name)
			continue
		}
		if res == nil || res.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %v, want 403", name, err)
		}
	}
	if n := f.upHits.Load(); n != 0 {
		t.Errorf("upstream contacted %d times", n)
	}
	if n := f.resolves.Load(); n != 0 {
		t.Errorf("resolver called %d times", n)
	}
}

func TestWebSocketNotFound(t *testing.T) {
	f := newFixture(t, wsEcho(), nil)
	_, res, err := dialWS(t, wsURL(f.front.URL, "/wb/missing/api/kernels/k1/channels"),
		http.Header{"Origin": {f.front.URL}})
	if err == nil || res == nil || res.StatusCode != http.StatusNotFound {
		t.Fatalf("err %v res %v, want 404", err, res)
	}
	if f.upHits.Load() != 0 {
		t.Error("upstream contacted")
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Error("timed out")
	}
}

// Keep-alive pings from Jupyter and the browser's pongs are not activity;
// a message from the browser is. (Jupyter pings every kernel WebSocket
// every 30 s: were pongs activity, a forgotten tab would never be culled.)
func TestWebSocketPingsAreNotActivity(t *testing.T) {
	var pongs atomic.Int64
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := r.Context()
		go func() {
			for ctx.Err() == nil {
				if c.Ping(ctx) == nil { // returns once the pong is back
					pongs.Add(1)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
		for {
			if _, _, err := c.Read(ctx); err != nil {
				return
			}
		}
	})
	f := newFixture(t, upstream, func(o *Options) { o.ActivityInterval = time.Nanosecond })
	c, _, err := dialWS(t, wsURL(f.front.URL, "/wb/abc/api/kernels/k1/channels"), http.Header{"Origin": {f.front.URL}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() { // reading is what answers pings
		for {
			if _, _, err := c.Read(ctx); err != nil {
				return
			}
		}
	}()
	for pongs.Load() < 10 && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	if n := pongs.Load(); n < 10 {
		t.Fatalf("only %d ping/pong round trips through the proxy", n)
	}
	if n := f.activityCount(); n != 1 {
		t.Fatalf("OnActivity called %d times after %d pings and no message, want 1 (the open)", n, pongs.Load())
	}
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"header":{"msg_type":"execute_request"}}`)); err != nil {
		t.Fatal(err)
	}
	for f.activityCount() < 2 && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	if n := f.activityCount(); n != 2 {
		t.Fatalf("OnActivity called %d times after one message, want 2", n)
	}
}
