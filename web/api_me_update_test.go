package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// PATCH /api/v1/me sets the Notifications page's email choice for a
// script: the answer and GET /me say it, the store keeps it, the audit log
// has it; a body without the field, or with a field /me does not take,
// is refused with a code and changes nothing; a cross-site request with
// the session cookie is refused.
func TestAPIMeSetsTheEmailChoice(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tok := tokenFor(t, p, "erin", "user")
	if _, me := p.api("GET", "/api/v1/me", tok, ""); me["email_workbench_notices"] != true {
		t.Fatalf("a new account: %v", me["email_workbench_notices"])
	}
	code, me := p.api("PATCH", "/api/v1/me", tok, `{"email_workbench_notices": false}`)
	if code != http.StatusOK || me["email_workbench_notices"] != false || me["username"] != "erin" {
		t.Fatalf("PATCH: %d %v", code, me)
	}
	if _, me := p.api("GET", "/api/v1/me", tok, ""); me["email_workbench_notices"] != false {
		t.Fatalf("GET after PATCH: %v", me["email_workbench_notices"])
	}
	u, err := p.srv.Store.UserByUsername(ctx, "erin")
	if err != nil || u.EmailWorkbenchNotices {
		t.Fatalf("stored choice %v (%v)", u.EmailWorkbenchNotices, err)
	}
	if es, _, err := p.srv.Store.AuditPage(ctx, "user.email_notices", "erin", 0, 10); err != nil || len(es) != 1 {
		t.Fatalf("audit %+v (%v)", es, err)
	}

	for body, want := range map[string]string{
		`{}`:                                 "invalid_body",
		`{"email": "x@example.org"}`:         "unknown_field",
		`{"email_workbench_notices": "yes"}`: "invalid_body",
	} {
		if code, res := p.api("PATCH", "/api/v1/me", tok, body); code != http.StatusBadRequest || errCode(res) != want {
			t.Errorf("PATCH %s: %d %v, want 400 %s", body, code, res, want)
		}
	}
	if u, _ := p.srv.Store.UserByUsername(ctx, "erin"); u.EmailWorkbenchNotices {
		t.Error("a refused PATCH changed the choice")
	}

	// With the session cookie, from another site: refused.
	c := p.client()
	p.login(c, "erin", "erin-password")
	req, _ := http.NewRequest(http.MethodPatch, p.ts.URL+"/api/v1/me", strings.NewReader(`{"email_workbench_notices": true}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	req.Header.Set("Origin", "https://evil.example")
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-site PATCH: %d", res.StatusCode)
	}
	if u, _ := p.srv.Store.UserByUsername(ctx, "erin"); u.EmailWorkbenchNotices {
		t.Error("a cross-site PATCH changed the choice")
	}
}
