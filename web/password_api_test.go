package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"workbench/models"
)

// PUT /api/v1/me/password changes the caller's own password: a wrong
// current password is 403 bad_password (401 would tell a client its token
// is bad), a short new one 400 with the
// field's code, and nothing changes; when it succeeds (204) the browser
// session is signed out, the old password no longer logs in, the new one
// does, the API token still works, and the change is audited.
func TestAPIPasswordChange(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	if _, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "lin", Password: "lin-password-1", Role: models.RoleUser}); err != nil {
		t.Fatal(err)
	}
	tok := tokenFor(t, p, "lin", models.RoleUser)
	browser := p.client()
	p.login(browser, "lin", "lin-password-1")

	code, out := p.api("PUT", "/api/v1/me/password", tok, `{"current_password":"not-it-at-all","new_password":"lin-password-2"}`)
	if e, _ := out["error"].(map[string]any); code != http.StatusForbidden || e["code"] != "bad_password" || e["message"] != "That is not your password." {
		t.Fatalf("wrong current password: %d %v", code, out)
	}
	code, out = p.api("PUT", "/api/v1/me/password", tok, `{"current_password":"lin-password-1","new_password":"short"}`)
	if e, _ := out["error"].(map[string]any); code != http.StatusBadRequest || e["code"] != "invalid_password" {
		t.Fatalf("short new password: %d %v", code, out)
	}
	code, out = p.api("PUT", "/api/v1/me/password", tok, `{"current_password":"lin-password-1","new":"lin-password-2"}`)
	if e, _ := out["error"].(map[string]any); code != http.StatusBadRequest || e["code"] != "unknown_field" {
		t.Fatalf("misspelt field: %d %v", code, out)
	}
	if res, _ := p.get(browser, "/"); res.StatusCode != http.StatusOK {
		t.Fatalf("the refused changes signed the browser out: %d", res.StatusCode)
	}

	if code, out = p.api("PUT", "/api/v1/me/password", tok, `{"current_password":"lin-password-1","new_password":"lin-password-2"}`); code != http.StatusNoContent {
		t.Fatalf("change: %d %v", code, out)
	}
	if res, _ := p.get(browser, "/"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the browser session survived the change: %d", res.StatusCode)
	}
	if res := p.postForm(p.client(), "/login", url.Values{"username": {"lin"}, "password": {"lin-password-1"}}); res.StatusCode == http.StatusSeeOther {
		t.Fatal("the old password still logs in")
	}
	p.login(p.client(), "lin", "lin-password-2")
	if code, _ := p.api("GET", "/api/v1/me", tok, ""); code != http.StatusOK {
		t.Fatalf("the API token stopped working: %d", code)
	}
	entries, _, err := p.srv.Store.AuditPage(ctx, "user.change_password", "lin", 0, 10)
	if err != nil || len(entries) != 1 {
		t.Fatalf("audit: %v (%v)", entries, err)
	}
}

// Once the throttle holds, the API says so (429 too_many_attempts with
// Retry-After) even for the right password: it answered 403 bad_password,
// and a script took its right password for a wrong one. POST /api/v1/sudo
// with a token checks no password, and says so instead of answering 204
// to any password.
func TestAPIPasswordThrottleIsNotABadPassword(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	if _, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "lin", Password: "lin-password-1", Role: models.RoleUser}); err != nil {
		t.Fatal(err)
	}
	tok := tokenFor(t, p, "lin", models.RoleUser)
	if code, out := p.api("POST", "/api/v1/sudo", tok, `{"password":"not-it"}`); code != http.StatusBadRequest || errCode(out) != "not_for_tokens" {
		t.Fatalf("sudo with a token and a wrong password: %d %v", code, out)
	}
	throttled := false
	for i := 0; i < 50 && !throttled; i++ {
		code, out := p.api("PUT", "/api/v1/me/password", tok, `{"current_password":"not-it-at-all","new_password":"lin-password-2"}`)
		switch {
		case code == http.StatusTooManyRequests && errCode(out) == "too_many_attempts":
			throttled = true
		case code != http.StatusForbidden || errCode(out) != "bad_password":
			t.Fatalf("wrong password, try %d: %d %v", i+1, code, out)
		}
	}
	if !throttled {
		t.Fatal("50 wrong passwords and no 429")
	}
	status, raw := p.apiBytes("PUT", "/api/v1/me/password", tok, `{"current_password":"lin-password-1","new_password":"lin-password-2"}`)
	if status != http.StatusTooManyRequests || !strings.Contains(string(raw), `"too_many_attempts"`) {
		t.Fatalf("the right password while throttled: %d %s", status, raw)
	}
	req, _ := http.NewRequest("PUT", p.ts.URL+"/api/v1/me/password", strings.NewReader(`{"current_password":"lin-password-1","new_password":"lin-password-2"}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Fatalf("throttled answer: %d, Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
}
