package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// `workbench health` is the container's health check: it succeeds when the
// portal on this host answers /healthz with 200, and fails when it answers
// otherwise or not at all (`workbench version` succeeded either way).
func TestHealthAsksTheRunningPortal(t *testing.T) {
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	for _, addr := range []string{":" + port, "0.0.0.0:" + port, "127.0.0.1:" + port} {
		if out, _, err := runCLI(t, "", "health", "--addr", addr); err != nil || strings.TrimSpace(out) != "ok" {
			t.Errorf("health --addr %s on a healthy portal: %v %q", addr, err, out)
		}
	}
	status = http.StatusServiceUnavailable
	if _, _, err := runCLI(t, "", "health", "--addr", ":"+port); err == nil || !strings.Contains(err.Error(), "not healthy") {
		t.Errorf("health on a portal answering 503: %v", err)
	}
	srv.Close()
	if _, _, err := runCLI(t, "", "health", "--addr", ":"+port, "--timeout", "2s"); err == nil || !strings.Contains(err.Error(), "does not answer") {
		t.Errorf("health with nothing listening: %v", err)
	}
}

// A portal that serves but cannot write its database answers /healthz 200
// (a load balancer keeps it), and says so in the body: `workbench health`
// fails then (the container reads unhealthy), with the portal's words.
func TestHealthFailsWhenTheDatabaseCannotBeWritten(t *testing.T) {
	body := `{"status":"ok","database":"writable"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	if out, _, err := runCLI(t, "", "health", "--addr", ":"+port); err != nil || strings.TrimSpace(out) != "ok" {
		t.Errorf("health of a writable portal: %v %q", err, out)
	}
	body = `{"status":"degraded","database":"not_writable","message":"the database cannot be written: the disk of the portal's data directory is full or read-only"}`
	out, _, err := runCLI(t, "", "health", "--addr", ":"+port)
	if err == nil || !strings.Contains(err.Error(), "serves, but is not healthy: the database cannot be written: the disk of the portal's data directory is full") || out != "" {
		t.Errorf("health of a portal whose database cannot be written: %v %q; want a failure saying so", err, out)
	}
	if code := exitCode(err, io.Discard); code == 0 {
		t.Errorf("exit status %d", code)
	}
}
