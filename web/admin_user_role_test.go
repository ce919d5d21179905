package web_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// An admin makes bob an admin from the users page and takes it back, as a
// lab manager hands the console over: each click asks for the password
// once (sudo), says what happened, is audited, and bob's own session gets
// the admin pages at once and loses them at once.
func TestBrowserMakeAndRemoveAdmin(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) { testBrowserMakeAndRemoveAdmin(t, js) })
	}
}

func testBrowserMakeAndRemoveAdmin(t *testing.T, js bool) {
	p, b := btAdminIn(t, js)
	tokenFor(t, p, "bob", "user")
	bob := p.client()
	p.login(bob, "bob", "bob-password")
	if res, _ := p.get(bob, "/admin/users"); res.StatusCode != http.StatusForbidden {
		t.Fatalf("bob on the admin pages before: %d, want 403", res.StatusCode)
	}

	var asked func() []string
	if js {
		asked = btAcceptDialogs(t, b)
	}
	btNavigate(t, b, p.ts.URL+"/admin/users")
	if n := len(btTexts(t, b, `[data-testid=user-row][data-username=admin] form[action$="/role"]`)); n != 0 {
		t.Errorf("the admin's own row offers %d role buttons, want none", n)
	}
	resp := btSubmit(t, b, "click Make admin on bob's row", chromedp.Click(chromedp.CSS(`[data-testid=user-row][data-username=bob] [data-testid=make-admin]`)))
	resp = btConfirmSudo(t, b, resp, btAdminPassword)
	if !js {
		// No confirm() ran: the portal asks on a page of its own, which
		// does not carry the password just typed.
		if got := btText(t, b, `[data-testid=confirm-question]`); !strings.Contains(got, "Make bob an administrator?") {
			t.Fatalf("Make admin with no JavaScript asked %q", got)
		}
		if n := len(btTexts(t, b, `[data-testid=confirm] input[name=sudo_password]`)); n != 0 {
			t.Fatal("the question page carries the administrator's password")
		}
		btSubmit(t, b, "answer the question", chromedp.Click(chromedp.CSS(`[data-testid=confirm-yes]`)))
	}
	if msg := btText(t, b, `[data-testid=flash]`); msg != "bob is now an administrator." {
		t.Fatalf("flash after Make admin: %q", msg)
	}
	if got := btText(t, b, `[data-testid=user-row][data-username=bob] td:nth-child(4)`); got != "admin" {
		t.Errorf("bob's role column reads %q, want admin", got)
	}
	if res, _ := p.get(bob, "/admin/users"); res.StatusCode != http.StatusOK {
		t.Fatalf("bob on the admin pages after Make admin: %d, want 200", res.StatusCode)
	}

	btSubmit(t, b, "click Remove admin on bob's row", chromedp.Click(chromedp.CSS(`[data-testid=user-row][data-username=bob] [data-testid=remove-admin]`)))
	if msg := btText(t, b, `[data-testid=flash]`); msg != "bob is no longer an administrator; their admin pages closed at once." {
		t.Fatalf("flash after Remove admin: %q", msg)
	}
	if res, _ := p.get(bob, "/admin/users"); res.StatusCode != http.StatusForbidden {
		t.Fatalf("bob on the admin pages after Remove admin: %d, want 403", res.StatusCode)
	}

	entries, err := p.srv.Store.ListAudit(context.Background(), 20)
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, e := range entries {
		if e.Action == "user.set_role" && e.Target == "bob" && e.Actor == "admin" {
			roles = append(roles, e.After)
		}
	}
	if len(roles) != 2 {
		t.Fatalf("audit rows user.set_role for bob: %q, want two (make, remove)", roles)
	}

	// Disabling ends bob's sessions and stops his workbenches: with
	// JavaScript the button asks first, as Make admin did (removing a
	// right does not).
	btSubmit(t, b, "click Disable on bob's row", chromedp.Click(chromedp.CSS(`[data-testid=user-row][data-username=bob] [data-testid=disable-user]`)))
	if !js {
		if got := btText(t, b, `[data-testid=confirm-question]`); !strings.Contains(got, "Disable bob?") {
			t.Fatalf("Disable with no JavaScript asked %q", got)
		}
		btSubmit(t, b, "answer the question", chromedp.Click(chromedp.CSS(`[data-testid=confirm-yes]`)))
	}
	if u, err := p.srv.Store.UserByUsername(context.Background(), "bob"); err != nil || !u.Disabled {
		t.Errorf("bob after Disable: %+v (%v), want disabled", u, err)
	}
	if js {
		want := []string{"Make bob an administrator? They can then change every user, quota, price and workbench.",
			"Disable bob? Their sessions and API tokens end and their running workbenches stop (homes are kept)."}
		if got := asked(); !slices.Equal(got, want) {
			t.Errorf("questions asked: %q, want %q", got, want)
		}
	}
}

// The same through the JSON API, and the account switch the Disable button
// uses: errors with codes, no-ops unaudited, a disabled user's token dead.
func TestAPIUserRoleAndDisabled(t *testing.T) {
	p := newPortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	carolTok := tokenFor(t, p, "carol", "user")
	carol, _ := p.srv.Store.UserByUsername(context.Background(), "carol")
	self, _ := p.srv.Store.UserByUsername(context.Background(), "admin")
	path := func(id int64, what string) string { return "/api/v1/admin/users/" + itoa(id) + "/" + what }

	if code, out := p.api("PUT", path(carol.ID, "role"), admin, `{"role":"admin"}`); code != 200 || out["role"] != "admin" || out["username"] != "carol" {
		t.Fatalf("make carol admin: %d %v", code, out)
	}
	if code, _ := p.api("GET", "/api/v1/admin/users", carolTok, ""); code != 200 {
		t.Fatalf("carol's token on an admin API after the change: %d", code)
	}
	audits := func() int {
		entries, _ := p.srv.Store.ListAudit(context.Background(), 50)
		n := 0
		for _, e := range entries {
			if e.Action == "user.set_role" {
				n++
			}
		}
		return n
	}
	if code, out := p.api("PUT", path(carol.ID, "role"), admin, `{"role":"admin"}`); code != 200 || out["role"] != "admin" || audits() != 1 {
		t.Fatalf("the same role again: %d %v, %d audit rows; want 200 and still 1", code, out, audits())
	}
	if code, out := p.api("PUT", path(carol.ID, "role"), admin, `{"role":"root"}`); code != 400 || errCode(out) != "invalid_role" {
		t.Errorf("role root: %d %v, want 400 invalid_role", code, out)
	}
	if code, out := p.api("PUT", path(self.ID, "role"), admin, `{"role":"user"}`); code != 409 || errCode(out) != "self_role" {
		t.Errorf("an admin demoting themselves: %d %v, want 409 self_role", code, out)
	}
	if code, out := p.api("PUT", path(999999, "role"), admin, `{"role":"user"}`); code != 404 {
		t.Errorf("role of no such user: %d %v, want 404", code, out)
	}
	if code, out := p.api("PUT", path(carol.ID, "role"), admin, `{"role":"user"}`); code != 200 || out["role"] != "user" {
		t.Fatalf("remove carol's admin: %d %v", code, out)
	}
	if code, _ := p.api("GET", "/api/v1/admin/users", carolTok, ""); code != 403 {
		t.Fatalf("carol's token on an admin API after removal: %d, want 403", code)
	}

	if code, out := p.api("PUT", path(carol.ID, "disabled"), admin, `{}`); code != 400 || errCode(out) != "invalid_disabled" {
		t.Errorf("disabled missing: %d %v, want 400 invalid_disabled", code, out)
	}
	if code, out := p.api("PUT", path(self.ID, "disabled"), admin, `{"disabled":true}`); code != 409 || errCode(out) != "self_disable" {
		t.Errorf("an admin disabling themselves: %d %v, want 409 self_disable", code, out)
	}
	if code, out := p.api("PUT", path(carol.ID, "disabled"), admin, `{"disabled":true}`); code != 200 || out["disabled"] != true {
		t.Fatalf("disable carol: %d %v", code, out)
	}
	if code, _ := p.api("GET", "/api/v1/me", carolTok, ""); code != 401 {
		t.Fatalf("a disabled user's token: %d, want 401", code)
	}
	if code, out := p.api("PUT", path(carol.ID, "disabled"), admin, `{"disabled":false}`); code != 200 || out["disabled"] != false {
		t.Fatalf("enable carol: %d %v", code, out)
	}
	if u, _ := p.srv.Store.UserByUsername(context.Background(), "carol"); u.Disabled || u.Role != models.RoleUser {
		t.Fatalf("carol after: %+v", u)
	}

	// The page's form posted for oneself (no button offers it): back to
	// the list with the reason, in the reader's words.
	c := p.client()
	p.loginSudo(c, "admin", adminPassword)
	if res := p.postForm(c, "/admin/users/"+itoa(self.ID)+"/role", url.Values{"role": {"user"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("self role by form: %d, want 303 back to the list", res.StatusCode)
	}
	if _, body := p.get(c, "/admin/users"); !strings.Contains(body, "Role not changed: you cannot change your own role; another admin can.") {
		t.Fatal("the users page does not say why the own role was not changed")
	}
}
