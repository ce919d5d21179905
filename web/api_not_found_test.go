package web_test

import (
	"strings"
	"testing"
)

// A script that names something that is not there is told so in its own
// terms: the id or name in the address, not the pages' "link … go back to
// the list". The pages keep theirs.
func TestAPINotFoundIsWordedForAScript(t *testing.T) {
	p := newPortal(t)
	alice := tokenFor(t, p, "alice", "user")
	admin := tokenFor(t, p, "root", "admin")
	const want = "not found: it may have been deleted, or the id or name in the address is wrong; list them again and use a current one"
	for _, tc := range []struct{ token, path string }{
		{alice, "/api/v1/workbenches/nosuch"},
		{alice, "/api/v1/workbenches/nosuch/logs"},
		{admin, "/api/v1/admin/quotas/users/nosuch"},
	} {
		code, body := p.api("GET", tc.path, tc.token, "")
		e, _ := body["error"].(map[string]any)
		if code != 404 || e["code"] != "not_found" || e["message"] != want {
			t.Errorf("GET %s: %d %v, want 404 not_found %q", tc.path, code, body, want)
		}
	}
	c := p.client()
	p.login(c, "alice", "alice-password")
	res, page := p.get(c, "/workbenches/nosuch")
	if res.StatusCode != 404 || !strings.Contains(page, "go back to the list") {
		t.Errorf("the page for a workbench that is not there: %d, want 404 with the pages' wording", res.StatusCode)
	}
}
