package main

import (
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
