package web_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"workbench/web"
)

// A second `workbench serve` on the same data, stopped while it waits for
// the install lease the first holds, never served: it must not log
// "serving" (it did, with install="", just before "shutting down"). It
// stops cleanly and says why; the first keeps serving.
func TestServeStoppedWhileWaitingForTheLeaseNeverSaysServing(t *testing.T) {
	cli := dockerClient(t) // the engine holds the lease
	dir := t.TempDir()
	serve := func(ctx context.Context, logs *syncBuffer) (*web.Server, chan error) {
		t.Helper()
		cfg, err := portalConfig(dir, func(c *web.Config) { c.LogLevel = "info" })
		if err != nil {
			t.Fatal(err)
		}
		srv, err := web.NewServer(context.Background(), cfg, slog.New(slog.NewTextHandler(logs, nil)), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ctx, ln) }()
		return srv, done
	}
	waitLog := func(logs *syncBuffer, want string, done chan error) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for !strings.Contains(logs.String(), want) {
			select {
			case err := <-done:
				t.Fatalf("serve ended before logging %q: %v\n%s", want, err, logs)
			case <-time.After(10 * time.Millisecond): // poll: the log line is the condition
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %q in a minute:\n%s", want, logs)
			}
		}
	}
	var firstLogs, secondLogs syncBuffer
	ctx1, cancel1 := context.WithCancel(context.Background())
	first, done1 := serve(ctx1, &firstLogs)
	if id, err := first.Store.InstallID(context.Background()); err == nil {
		cleanupInstall(t, cli, id) // the lease and its beats
	}
	defer func() { cancel1(); <-done1; first.Close() }()
	waitLog(&firstLogs, "msg=serving", done1)

	ctx2, cancel2 := context.WithCancel(context.Background())
	second, done2 := serve(ctx2, &secondLogs)
	defer second.Close()
	waitLog(&secondLogs, "another portal holds it; waiting", done2)
	cancel2()
	select {
	case err := <-done2:
		if err != nil {
			t.Errorf("the second serve, stopped while waiting: %v, want a clean stop", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the second serve did not stop")
	}
	logs := secondLogs.String()
	if strings.Contains(logs, "msg=serving") || strings.Contains(logs, "shutting down") || !strings.Contains(logs, "waiting for the install lease") {
		t.Errorf("the second serve never held the lease, yet logged:\n%s", logs)
	}
}
