package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"workbench/models"
)

// The portal's database cannot be written (its disk full, or read-only).
// A change answered a generic 500 "something went wrong … try again",
// which sent people round in circles; a sign-in with the right password
// was answered 303 as if it worked, and the browser, with no session
// saved, came back to the login form with no word why. Both now say what
// is wrong (503) and that running workbenches keep running.
func TestUnwritableDatabaseIsSaidSo(t *testing.T) {
	t.Parallel()
	p := newPortal(t)
	ctx := context.Background()
	u, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "alice", Password: "alice-password-1", Role: "user"})
	if err != nil {
		t.Fatal(err)
	}
	_, secret, err := p.srv.Store.CreateToken(ctx, u.ID, "script", 0)
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := p.srv.Store.CreateToken(ctx, u.ID, "other", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.QueryOnly(ctx, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.srv.Store.QueryOnly(context.Background(), false) })

	status, body := p.api(http.MethodDelete, fmt.Sprintf("/api/v1/tokens/%d", other.ID), secret, "")
	if status != http.StatusServiceUnavailable || errCode(body) != "storage_unavailable" {
		t.Errorf("a change with the database unwritable: %d %v, want 503 storage_unavailable", status, body)
	}

	res, page := p.postFormBody(p.client(), "/login", url.Values{"username": {"alice"}, "password": {"alice-password-1"}})
	if res.StatusCode != http.StatusServiceUnavailable || !strings.Contains(page, "cannot sign anyone in right now") {
		t.Errorf("sign-in with the database unwritable: %d (location %q), want 503 saying why:\n%.600s", res.StatusCode, res.Header.Get("Location"), page)
	}
	if c := sessionCookie(res); c != nil {
		t.Errorf("a session cookie was sent for a session that was not saved: %v", c)
	}
}
