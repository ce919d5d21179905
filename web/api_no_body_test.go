package web_test

import (
	"net/http"
	"strings"
	"testing"
)

// An endpoint that reads no body refuses one it would ignore: a script
// that sent {"force": true} to stop got a graceful stop and a 200, and a
// body meant for revocation options was dropped without a word. An empty
// body or an empty object (clients that always send one) still works.
func TestBodylessEndpointsRefuseABody(t *testing.T) {
	p := newPortal(t)
	tok := tokenFor(t, p, "fay", "user")
	code, list := p.api("GET", "/api/v1/tokens", tok, "")
	if code != 200 {
		t.Fatalf("tokens: %d", code)
	}
	id := itoa(int64(list["items"].([]any)[0].(map[string]any)["id"].(float64)))
	for _, body := range []string{`{"force": true}`, `{"reason": "walk test", "all": 1}`} {
		code, out := p.api("DELETE", "/api/v1/tokens/"+id, tok, body)
		e, _ := out["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if code != http.StatusBadRequest || errCode(out) != "unknown_field" || !strings.Contains(msg, "takes no body") {
			t.Errorf("DELETE a token with %s: %d %v; want 400 unknown_field", body, code, out)
		}
	}
	if code, out := p.api("DELETE", "/api/v1/tokens/"+id, tok, `not json`); code != http.StatusBadRequest || errCode(out) != "invalid_body" {
		t.Errorf("DELETE a token with a non-JSON body: %d %v; want 400 invalid_body", code, out)
	}
	if code, _ := p.api("GET", "/api/v1/me", tok, ""); code != 200 {
		t.Fatalf("a refused revocation revoked the token: %d", code)
	}
	if code, out := p.api("DELETE", "/api/v1/tokens/"+id, tok, ` {} `); code != http.StatusNoContent {
		t.Errorf("DELETE a token with {}: %d %v; want 204", code, out)
	}
}
