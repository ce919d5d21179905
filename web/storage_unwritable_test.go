package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"workbench/models"
	"workbench/web"
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

// /healthz and /metrics tell a database that cannot be written: /healthz
// said "ok" and a monitor saw nothing while every change was refused. It
// stays 200 (a load balancer must not take the only portal away from the
// running notebooks), "degraded", with the database's state and what it
// means, and no path or SQLite error (it is public). A refused change
// tells it at once, not at the next probe.
func TestHealthzTellsUnwritableDatabase(t *testing.T) {
	t.Parallel()
	var dataDir string
	p := newPortal(t, func(c *web.Config) { dataDir = c.DataDir })
	ctx := context.Background()
	admin, err := p.srv.Store.UserByUsername(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	_, token, err := p.srv.Store.CreateToken(ctx, admin.ID, "monitor", 0)
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := p.srv.Store.CreateToken(ctx, admin.ID, "other", 0)
	if err != nil {
		t.Fatal(err)
	}
	type healthBody struct{ Status, Database, Message string }
	health := func() (int, healthBody, string) {
		t.Helper()
		status, raw := p.apiBytes(http.MethodGet, "/healthz", "", "")
		var h healthBody
		if err := json.Unmarshal(raw, &h); err != nil {
			t.Fatalf("healthz %d %s: %v", status, raw, err)
		}
		return status, h, string(raw)
	}
	metric := func() string {
		t.Helper()
		status, raw := p.apiBytes(http.MethodGet, "/metrics", token, "")
		if status != http.StatusOK {
			t.Fatalf("/metrics: %d", status)
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if v, ok := strings.CutPrefix(line, "workbench_database_writable "); ok {
				return v
			}
		}
		t.Fatalf("/metrics has no workbench_database_writable:\n%.3000s", raw)
		return ""
	}
	if status, h, raw := health(); status != http.StatusOK || h.Status != "ok" || h.Database != "writable" {
		t.Fatalf("healthz of a writable database: %d %s", status, raw)
	}
	if v := metric(); v != "1" {
		t.Errorf("workbench_database_writable of a writable database: %s", v)
	}

	if err := p.srv.Store.QueryOnly(ctx, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.srv.Store.QueryOnly(context.Background(), false) })
	if status, body := p.api(http.MethodDelete, fmt.Sprintf("/api/v1/tokens/%d", other.ID), token, ""); status != http.StatusServiceUnavailable {
		t.Fatalf("a change with the database unwritable: %d %v", status, body)
	}
	status, h, raw := health()
	if status != http.StatusOK || h.Status != "degraded" || h.Database != "not_writable" ||
		!strings.Contains(h.Message, "cannot be written") || !strings.Contains(h.Message, "running workbenches keep running") {
		t.Errorf("healthz with the database unwritable: %d %s; want 200, degraded, not_writable, saying what it means", status, raw)
	}
	if strings.Contains(raw, dataDir) || strings.Contains(raw, "readonly") {
		t.Errorf("healthz tells a path or SQLite's words to anyone: %s", raw)
	}
	if v := metric(); v != "0" {
		t.Errorf("workbench_database_writable with the database unwritable: %s, want 0", v)
	}
}

// A form's refusal is put in the session for the page it redirects to.
// While the database cannot be written the session is not saved, so the
// page came back without a word, as if the form had worked (here: an
// admin's own role, refused before anything is written). The refusal is
// now answered at once, on an error page saying it; with the database
// writable it is still the redirect and the flash.
func TestFormRefusalShownWhenTheSessionCannotBeSaved(t *testing.T) {
	t.Parallel()
	p := newPortal(t)
	ctx := context.Background()
	self, err := p.srv.Store.UserByUsername(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	c := p.client()
	p.loginSudo(c, "admin", adminPassword)
	if err := p.srv.Store.QueryOnly(ctx, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.srv.Store.QueryOnly(context.Background(), false) })
	const why = "Role not changed: you cannot change your own role; another admin can."
	res, page := p.postFormBody(c, fmt.Sprintf("/admin/users/%d/role", self.ID), url.Values{"role": {"user"}})
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Location") != "" {
		t.Fatalf("refused form, database unwritable: %d (location %q), want 503 and no redirect", res.StatusCode, res.Header.Get("Location"))
	}
	if got := mpDoc(t, page).Find(`[data-testid=error]`).Text(); !strings.Contains(got, why) {
		t.Errorf("the error page does not say why: %q", got)
	}
	if n := strings.Count(page, "Role not changed"); n != 1 {
		t.Errorf("the error page says why %d times, want once (not again as a flash)", n)
	}

	if err := p.srv.Store.QueryOnly(ctx, false); err != nil {
		t.Fatal(err)
	}
	res = p.postForm(c, fmt.Sprintf("/admin/users/%d/role", self.ID), url.Values{"role": {"user"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("refused form, database writable: %d, want 303 back to the list", res.StatusCode)
	}
	if _, body := p.get(c, "/admin/users"); !strings.Contains(body, why) {
		t.Error("the users page does not say why, once the database is writable")
	}
}
