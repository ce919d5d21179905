package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// A script that posts JSON the way the README's curl example does
// (`curl -d '{…}'`, which labels the body application/x-www-form-urlencoded)
// gets its request done, not "the request body is empty"; a body over the
// limit is still 413.
func TestAPIJSONSentAsCurlSendsIt(t *testing.T) {
	p := newPortal(t)
	tok := tokenFor(t, p, "fay", "user")
	curl := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		code, b := p.apiBytesAs("application/x-www-form-urlencoded", method, path, tok, body) // curl -d's label
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s %s: not JSON (%d): %s", method, path, code, b)
		}
		return code, out
	}
	code, body := curl("POST", "/api/v1/tokens", `{"name":"laptop","expires_days":7}`)
	if item, _ := body["item"].(map[string]any); code != http.StatusCreated || item["name"] != "laptop" {
		t.Fatalf("POST /tokens as curl -d: %d %v", code, body)
	}
	if code, body := curl("PATCH", "/api/v1/me", `{"email_workbench_notices":false}`); code != http.StatusOK || body["email_workbench_notices"] != false {
		t.Fatalf("PATCH /me as curl -d: %d %v", code, body)
	}
	// The launch the README shows: the body is read (the catalog has no
	// such image here, and the answer says so by its field).
	if code, body := curl("POST", "/api/v1/workbenches", `{"name":"exp1","image":"PyTorch (CUDA 12)","flavor":"no such flavor"}`); code != http.StatusBadRequest || errCode(body) == "invalid_body" {
		t.Fatalf("POST /workbenches as curl -d: %d %v", code, body)
	}
	// Form data is not JSON, and the answer says so in those words.
	if code, body := curl("POST", "/api/v1/tokens", `name=laptop&expires_days=7`); code != http.StatusBadRequest || errCode(body) != "invalid_body" ||
		!strings.Contains(body["error"].(map[string]any)["message"].(string), "form data (name=value&…), not JSON") {
		t.Fatalf("form data: %d %v", code, body)
	}
	big := `{"name":"` + strings.Repeat("x", 2<<20) + `"}`
	if code, body := curl("POST", "/api/v1/tokens", big); code != http.StatusRequestEntityTooLarge || errCode(body) != "body_too_large" {
		t.Fatalf("2 MiB as curl -d: %d %v", code, body)
	}
}
