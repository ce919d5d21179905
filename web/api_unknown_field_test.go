package web_test

import (
	"context"
	"strings"
	"testing"
)

// A body field the endpoint does not have is refused with its name, not
// ignored: a misspelt "preemptable" would otherwise launch at the full price
// and say nothing. Nothing is created; the right spelling then works.
func TestAPIRefusesUnknownBodyFields(t *testing.T) {
	p := newPortal(t)
	tok := tokenFor(t, p, "alice", "user")
	admin := tokenFor(t, p, "admin", "admin")
	for _, c := range []struct{ method, path, token, body, field string }{
		{"POST", "/api/v1/workbenches", tok, `{"name":"exp","image":"PyTorch (CUDA 12)","flavor":"CPU small","preemptable":true}`, "preemptable"},
		{"POST", "/api/v1/tokens", tok, `{"name":"ci","expires_in_days":30}`, "expires_in_days"},
		{"PUT", "/api/v1/admin/calculator/settings", admin, `{"discounts":{"spot":{"bps":3000}}}`, "discounts"},
	} {
		code, body := p.api(c.method, c.path, c.token, c.body)
		e, _ := body["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if code != 400 || errCode(body) != "unknown_field" || !strings.Contains(msg, `"`+c.field+`"`) {
			t.Errorf("%s %s with %q: %d %v, want 400 unknown_field naming it", c.method, c.path, c.field, code, body)
		}
	}
	alice, err := p.srv.Store.UserByUsername(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if wbs, err := p.srv.Store.ListWorkbenches(context.Background(), alice.ID); err != nil || len(wbs) != 0 {
		t.Fatalf("a refused launch left %d workbenches (%v)", len(wbs), err)
	}
	// Empty bodies say so; valid ones still pass.
	if code, body := p.api("POST", "/api/v1/tokens", tok, ""); code != 400 || errCode(body) != "invalid_body" {
		t.Errorf("empty body: %d %v", code, body)
	}
	if code, body := p.api("POST", "/api/v1/tokens", tok, `{"name":"ci"}`); code >= 300 {
		t.Errorf("a valid token request: %d %v", code, body)
	}
}
