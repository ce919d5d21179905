package web_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestAPIRefusesQueryItDoesNotRead: a query parameter an API endpoint does
// not read, or an on/off value it cannot read, is a 400 naming it, and
// nothing is done. /api/v1/usage?foo=1 answered the month's figures,
// ?state=running every workbench, stop?force=1 stopped gracefully and
// start?queue=maybe started without queueing, none saying so.
func TestAPIRefusesQueryItDoesNotRead(t *testing.T) {
	p, _ := enginePortal(t)
	alice := tokenFor(t, p, "alice", "user")
	admin := tokenFor(t, p, "root", "admin")
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"q","image":"fake","flavor":"CPU small"}`)
	if code != http.StatusAccepted {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, p, alice, id, "running")

	for _, tc := range []struct {
		method, path, token, code, names string
	}{
		{"GET", "/api/v1/usage?foo=1", alice, "unknown_parameter", "foo: is not a parameter of this endpoint (it takes: from, to, group_by, user)"},
		{"GET", "/api/v1/workbenches?state=running", alice, "unknown_parameter", "state:"},
		{"GET", "/api/v1/me?verbose=1", alice, "unknown_parameter", "verbose: is not a parameter of this endpoint (it takes none)"},
		{"GET", "/api/v1/admin/users?q=alice", admin, "unknown_parameter", "q:"},
		{"GET", "/api/v1/workbenches?all=yes", admin, "invalid_all", "must be true or false"},
		{"GET", "/api/v1/workbenches/" + id + "/logs?tail=abc", alice, "invalid_tail", "from 1 to 10000"},
		{"GET", "/api/v1/workbenches/" + id + "/logs?tail=-3", alice, "invalid_tail", "from 1 to 10000"},
		{"GET", "/api/v1/workbenches/" + id + "/logs?follow=1", alice, "invalid_follow", "must be true or false"},
		{"POST", "/api/v1/workbenches/" + id + "/stop?force=1", alice, "invalid_force", "must be true or false"},
		{"POST", "/api/v1/workbenches/" + id + "/stop?forced=true", alice, "unknown_parameter", "forced:"},
		{"GET", "/api/v1/usage?from=2026-11-01&from=2026-10-01", alice, "invalid_from", "from: is given more than once"},
		{"GET", "/api/v1/admin/reservations/unused?format=xml", admin, "invalid_format", "format: csv or json"},
	} {
		got, out := p.api(tc.method, tc.path, tc.token, "")
		e, _ := out["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if got != http.StatusBadRequest || errCode(out) != tc.code || !strings.Contains(msg, tc.names) {
			t.Errorf("%s %s: %d %v, want 400 %s saying %q", tc.method, tc.path, got, out, tc.code, tc.names)
		}
	}
	// The refused stops did nothing.
	if code, got := p.api("GET", "/api/v1/workbenches/"+id, alice, ""); code != 200 || got["state"] != "running" {
		t.Fatalf("after refused stops: %d %v, want it still running", code, got)
	}
	// What the endpoints do read still works.
	if code, _ := p.api("GET", "/api/v1/workbenches?all=true", admin, ""); code != 200 {
		t.Errorf("?all=true: %d", code)
	}
	if code, _ := p.apiBytes("GET", "/api/v1/workbenches/"+id+"/logs?tail=5", alice, ""); code != 200 {
		t.Errorf("logs?tail=5: %d", code)
	}
	if code, out := p.api("POST", "/api/v1/workbenches/"+id+"/stop?force=true", alice, ""); code != 200 {
		t.Fatalf("stop?force=true: %d %v", code, out)
	}
	if code, out := p.api("POST", "/api/v1/workbenches/"+id+"/start?queue=maybe", alice, ""); code != http.StatusBadRequest || errCode(out) != "invalid_queue" {
		t.Errorf("start?queue=maybe: %d %v, want 400 invalid_queue", code, out)
	}
	if code, out := p.api("POST", "/api/v1/workbenches/"+id+"/start?mode=turbo", alice, ""); code != http.StatusBadRequest || errCode(out) != "invalid_mode" {
		t.Errorf("start?mode=turbo: %d %v, want 400 invalid_mode", code, out)
	}
	if code, got := p.api("GET", "/api/v1/workbenches/"+id, alice, ""); code != 200 || got["state"] != "stopped" {
		t.Errorf("after refused starts: %d %v, want it still stopped", code, got)
	}
	if code, out := p.api("POST", "/api/v1/workbenches/"+id+"/start?queue=true", alice, ""); code != 200 {
		t.Errorf("start?queue=true: %d %v", code, out)
	}
}
