package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// An admin renames bob to robert on the rename page, which says before the
// change what it does to him. Afterwards the old name no longer signs in
// and the new one does; bob's session (by account id) and API token keep
// working; he is told in his notifications; the change is audited with
// both names. A taken or malformed name is said beside the field and
// changes nothing. The API does the same with codes.
func TestAdminRenamesAUser(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	bobToken := tokenFor(t, p, "bob", "user")
	tokenFor(t, p, "alice", "user")
	adminToken := tokenFor(t, p, "admin", "admin")
	bob, err := p.srv.Store.UserByUsername(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	bc := p.client()
	p.login(bc, "bob", "bob-password")
	ac := p.client()
	p.loginSudo(ac, "admin", adminPassword)

	// The users page links to the rename page, which says what changes.
	_, page := p.get(ac, "/admin/users")
	row := parseHTML(t, page).Find(`[data-testid=user-row][data-username=bob]`)
	if href, _ := row.Find(`[data-testid=rename-user]`).Attr("href"); href != "/admin/users/"+itoa(bob.ID)+"/rename" {
		t.Fatalf("bob's row has no Rename link (%q)", href)
	}
	res, page := p.get(ac, "/admin/users/"+itoa(bob.ID)+"/rename")
	doc := parseHTML(t, page)
	if res.StatusCode != 200 || !strings.Contains(doc.Find(`[data-testid=user-rename-changes]`).Text(), "bob must sign in with the new name") ||
		!strings.Contains(doc.Find(`[data-testid=user-rename-keeps]`).Text(), "SSH commands") {
		t.Fatalf("rename page %d: changes %q, keeps %q", res.StatusCode, doc.Find(`[data-testid=user-rename-changes]`).Text(), doc.Find(`[data-testid=user-rename-keeps]`).Text())
	}

	// Refused names: said on the form, as typed; nothing changes.
	for _, c := range []struct {
		name   string
		status int
		says   string
	}{
		{"alice", http.StatusConflict, "already taken"},
		{"Rob Ert", http.StatusBadRequest, "lowercase letters"},
		{"deleted-3", http.StatusBadRequest, "kept for deleted accounts"},
	} {
		res, page := p.postFormBody(ac, "/admin/users/"+itoa(bob.ID)+"/rename", url.Values{"username": {c.name}})
		doc := parseHTML(t, page)
		if res.StatusCode != c.status || !strings.Contains(doc.Find(`.field-error`).Text(), c.says) || doc.Find(`[data-testid=user-rename-name]`).AttrOr("value", "") != c.name {
			t.Errorf("rename to %q: %d, error %q, field %q", c.name, res.StatusCode, doc.Find(`.field-error`).Text(), doc.Find(`[data-testid=user-rename-name]`).AttrOr("value", ""))
		}
	}
	if u, _ := p.srv.Store.UserByID(ctx, bob.ID); u.Username != "bob" {
		t.Fatalf("a refused rename renamed bob to %q", u.Username)
	}

	res = p.postForm(ac, "/admin/users/"+itoa(bob.ID)+"/rename", url.Values{"username": {"robert"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("rename: %d", res.StatusCode)
	}
	_, page = p.get(ac, "/admin/users")
	if f := parseHTML(t, page).Find(`[data-testid=flash]`).Text(); !strings.Contains(f, "bob is now robert") {
		t.Errorf("flash %q", f)
	}
	// Sessions are by account id: bob's stays signed in, as robert.
	if code, me := p.sessionAPI(bc, "GET", "/api/v1/me", ""); code != 200 || me["username"] != "robert" {
		t.Errorf("bob's session after the rename: %d %v", code, me)
	}
	if code, me := p.api("GET", "/api/v1/me", bobToken, ""); code != 200 || me["username"] != "robert" {
		t.Errorf("bob's token after the rename: %d %v", code, me)
	}
	if res := p.postForm(p.client(), "/login", url.Values{"username": {"bob"}, "password": {"bob-password"}}); res.StatusCode == http.StatusSeeOther {
		t.Error("the old name still signs in")
	}
	p.login(p.client(), "robert", "bob-password")
	code, notes := p.api("GET", "/api/v1/notifications", bobToken, "")
	items, _ := notes["items"].([]any)
	if code != 200 || len(items) != 1 || !strings.Contains(items[0].(map[string]any)["message"].(string), "from bob to robert") {
		t.Errorf("bob's notifications: %d %v", code, notes)
	}
	entries, _ := p.srv.Store.ListAudit(ctx, 20)
	found := false
	for _, e := range entries {
		if e.Action == "user.rename" {
			found = e.Actor == "admin" && e.Target == "bob" && strings.Contains(e.Before, `"bob"`) && strings.Contains(e.After, `"robert"`)
		}
	}
	if !found {
		t.Error("the rename is not audited with both names")
	}

	// The API: codes for what it refuses, the user for what it does.
	path := "/api/v1/admin/users/" + itoa(bob.ID) + "/username"
	for _, c := range []struct {
		body, code string
		status     int
	}{
		{`{"username":"alice"}`, "conflict", http.StatusConflict},
		{`{"username":"Alice"}`, "invalid_username", http.StatusBadRequest},
		{`{}`, "invalid_username", http.StatusBadRequest},
		{`{"username":"rob","role":"admin"}`, "unknown_field", http.StatusBadRequest},
		{`not json`, "invalid_body", http.StatusBadRequest},
	} {
		if code, body := p.api("PUT", path, adminToken, c.body); code != c.status || errCode(body) != c.code {
			t.Errorf("PUT %s: %d %v, want %d %s", c.body, code, body, c.status, c.code)
		}
	}
	if code, body := p.api("PUT", "/api/v1/admin/users/99999/username", adminToken, `{"username":"rob"}`); code != 404 || errCode(body) != "not_found" {
		t.Errorf("unknown user: %d %v", code, body)
	}
	if code, body := p.api("PUT", path, bobToken, `{"username":"rob"}`); code != 403 {
		t.Errorf("a user renamed himself through the admin API: %d %v", code, body)
	}
	if code, body := p.api("PUT", path, adminToken, `{"username":"rob"}`); code != 200 || body["username"] != "rob" {
		t.Errorf("rename through the API: %d %v", code, body)
	}
}
