package web_test

import (
	"net/http"
	"strings"
	"testing"
)

// A name already in use is a conflict (SPEC §8: 409 conflict/state), not
// bad input: a script that retries a creation can tell "it is there
// already" from "fix your request". The message still names the field.
func TestAPIDuplicateNamesAreConflicts(t *testing.T) {
	p := newPortal(t)
	admin := tokenFor(t, p, "root", "admin")
	alice := tokenFor(t, p, "alice", "user")
	cases := []struct {
		what, path, token, body, field string
	}{
		{"user", "/api/v1/admin/users", admin, `{"username": "dupuser", "password": "a-long-password-1"}`, "username"},
		{"group", "/api/v1/admin/groups", admin, `{"name": "dupgroup"}`, "name"},
		{"image", "/api/v1/images", admin, `{"name": "dupimage", "image": "workbench-test/none:1", "start_command": "x --port={port} --base-url={base_url} --token={token}"}`, "name"},
		{"flavor", "/api/v1/flavors", admin, `{"name": "dupflavor", "cpu_cores": 1, "memory_gib": 1}`, "name"},
		{"token", "/api/v1/tokens", alice, `{"name": "duptoken"}`, "name"},
	}
	for _, tc := range cases {
		if code, body := p.api("POST", tc.path, tc.token, tc.body); code != http.StatusCreated {
			t.Fatalf("%s: first creation: %d %v", tc.what, code, body)
		}
		code, body := p.api("POST", tc.path, tc.token, tc.body)
		e, _ := body["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if code != http.StatusConflict || errCode(body) != "conflict" || !strings.HasPrefix(msg, tc.field+": ") {
			t.Errorf("%s again: %d %v; want 409 conflict naming %s", tc.what, code, body, tc.field)
		}
	}
	// Bad input stays 400 with the field's code.
	if code, body := p.api("POST", "/api/v1/admin/groups", admin, `{"name": "a/b"}`); code != http.StatusBadRequest || errCode(body) != "invalid_name" {
		t.Errorf("bad group name: %d %v; want 400 invalid_name", code, body)
	}
}
