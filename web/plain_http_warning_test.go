package web_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"workbench/web"
)

// syncBuffer is a log sink the serving goroutine and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// With an https public URL, TLS is a proxy's job: a portal listening on
// an address the network reaches answers plain HTTP, passwords and cookies
// included, to anyone who reaches it. The start says so; on loopback it
// does not.
func TestPlainHTTPOnTheNetworkBehindHTTPSIsWarned(t *testing.T) {
	for _, tc := range []struct {
		addr string
		warn bool
	}{{"0.0.0.0:0", true}, {"127.0.0.1:0", false}} {
		cfg, err := portalConfig(t.TempDir(), func(c *web.Config) { c.PublicURL = "https://gpu.example.org"; c.LogLevel = "info" })
		if err != nil {
			t.Fatal(err)
		}
		var logs syncBuffer
		srv, err := web.NewServer(context.Background(), cfg, slog.New(slog.NewTextHandler(&logs, nil)), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ctx, ln) }()
		for !strings.Contains(logs.String(), `msg=serving`) {
			select {
			case err := <-done:
				t.Fatalf("serve ended before it served: %v", err)
			case <-time.After(10 * time.Millisecond): // poll: the log line is the condition
			}
		}
		cancel()
		<-done
		srv.Close()
		if got := strings.Contains(logs.String(), "plain HTTP is served"); got != tc.warn {
			t.Errorf("listening on %s behind https: warned %v, want %v", tc.addr, got, tc.warn)
		}
	}
}
