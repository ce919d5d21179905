package proxy

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// liveFixture is a proxy whose every request is user 7's, by grant
// "session-a", with a Live registry.
func liveFixture(t *testing.T, upstream http.Handler) (*fixture, *Live) {
	live := NewLive()
	var f *fixture
	f = newFixture(t, upstream, func(o *Options) {
		o.Live = live
		o.Resolve = func(r *http.Request, id string) (Target, error) {
			u, _ := url.Parse(f.up.URL)
			return Target{BaseURL: u, Token: "tok", UserID: 7, Grant: "session-a"}, nil
		}
	})
	return f, live
}

// waitClosed reads from c until it fails, and fails the test unless that
// happens within a second.
func waitClosed(t *testing.T, c *websocket.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	if _, _, err := c.Read(ctx); err == nil {
		t.Fatal("the WebSocket still delivers messages after revocation")
	} else if ctx.Err() != nil {
		t.Fatalf("the WebSocket was not closed within a second of revocation (%v)", err)
	}
	t.Logf("closed %v after revocation", time.Since(start))
}

func openEcho(t *testing.T, f *fixture) *websocket.Conn {
	t.Helper()
	c, _, err := dialWS(t, wsURL(f.front.URL, "/wb/abc/api/kernels/k/channels"), http.Header{"Origin": {f.front.URL}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if _, msg, err := c.Read(ctx); err != nil || string(msg) != "hi" {
		t.Fatalf("echo before revocation: %q %v", msg, err)
	}
	return c
}

func TestLiveCloseUserEndsWebSocket(t *testing.T) {
	f, live := liveFixture(t, wsEcho())
	c := openEcho(t, f)
	if n := live.Count(7); n != 1 {
		t.Fatalf("live connections of user 7: %d, want 1", n)
	}
	if n := live.CloseUser(8); n != 0 {
		t.Fatalf("closing another user ended %d connections", n)
	}
	if n := live.CloseUser(7); n != 1 {
		t.Fatalf("CloseUser ended %d connections, want 1", n)
	}
	waitClosed(t, c)
}

func TestLiveCloseGrantEndsWebSocket(t *testing.T) {
	f, live := liveFixture(t, wsEcho())
	c := openEcho(t, f)
	if n := live.CloseGrant("session-b"); n != 0 {
		t.Fatalf("closing another session ended %d connections", n)
	}
	if n := live.CloseGrant("session-a"); n != 1 {
		t.Fatalf("CloseGrant ended %d connections, want 1", n)
	}
	waitClosed(t, c)
}

// A request authenticated just before a revocation but registered just
// after it is ended too.
func TestLiveRevocationBeforeRegistration(t *testing.T) {
	live := NewLive()
	started := time.Now()
	live.CloseUser(7)
	ctx, cancel := context.WithCancel(context.Background())
	defer live.add(7, "g", "wb", started, cancel)()
	if ctx.Err() == nil {
		t.Fatal("a request resolved before the revocation survived it")
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer live.add(7, "g", "wb", time.Now().Add(time.Millisecond), cancel2)()
	if ctx2.Err() != nil {
		t.Fatal("a request authenticated after the revocation was ended")
	}
}
