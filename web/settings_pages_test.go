package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
)

// The user's settings pages (API tokens, SSH keys, password) lead to each other with
// the same tabs, say when they list nothing, and a token form refused (a
// name already used) comes back with the lifetime the user chose, not the
// default 30 days.
func TestSettingsPagesTabsEmptyStatesAndKeptLifetime(t *testing.T) {
	p := newPortal(t)
	if _, err := p.srv.Store.CreateUser(context.Background(), models.NewUser{Username: "bob", Password: "bob-password", Role: "user"}); err != nil {
		t.Fatal(err)
	}
	c := p.client()
	p.login(c, "bob", "bob-password")
	doc := func(path string) *goquery.Document {
		t.Helper()
		res, body := p.get(c, path)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", path, res.StatusCode)
		}
		return mpDoc(t, body)
	}
	for _, c := range []struct{ path, active, empty, table string }{
		{"/settings/tokens", "tokens-link", "no-tokens", "token-table"},
		{"/settings/ssh-keys", "ssh-keys-link", "no-ssh-keys", "ssh-key-table"},
		{"/settings/password", "password-link", "", ""},
		{"/settings/time-zone", "time-zone-link", "", ""},
	} {
		d := doc(c.path)
		tabs := d.Find(`[data-testid=settings-tabs] a`)
		if tabs.Length() != 4 || d.Find(`[data-testid=settings-tabs] a[href="/settings/tokens"]`).Length() != 1 ||
			d.Find(`[data-testid=settings-tabs] a[href="/settings/ssh-keys"]`).Length() != 1 ||
			d.Find(`[data-testid=settings-tabs] a[href="/settings/password"]`).Length() != 1 ||
			d.Find(`[data-testid=settings-tabs] a[href="/settings/time-zone"]`).Length() != 1 {
			t.Errorf("%s: settings tabs %q", c.path, tabs.Text())
		}
		if !d.Find(`[data-testid=` + c.active + `]`).HasClass("active") {
			t.Errorf("%s: its own tab is not marked active", c.path)
		}
		if c.empty == "" {
			continue
		}
		if d.Find(`[data-testid=`+c.empty+`]`).Length() != 1 || d.Find(`[data-testid=`+c.table+`]`).Length() != 0 {
			t.Errorf("%s with nothing in it: empty message %d, table %d", c.path, d.Find(`[data-testid=`+c.empty+`]`).Length(), d.Find(`[data-testid=`+c.table+`]`).Length())
		}
	}

	p.sudo(c, "bob-password")
	form := url.Values{"name": {"laptop"}, "expires_days": {"90"}}
	if res := p.postForm(c, "/settings/tokens", form); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create a token: %d", res.StatusCode)
	}
	form.Set("expires_days", "365")
	res, body := p.postFormBody(c, "/settings/tokens", form)
	d := mpDoc(t, body)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(d.Find(`[data-testid=error-name]`).Text(), "already have a token with this name") {
		t.Fatalf("a second token named laptop: %d %q", res.StatusCode, d.Find(`[data-testid=error-name]`).Text())
	}
	if got := d.Find(`select[name=expires_days] option[selected]`).AttrOr("value", ""); got != "365" {
		t.Errorf("the lifetime came back as %q, want the 365 days chosen", got)
	}
	if d.Find(`[data-testid=token-table] [data-testid=token-row]`).Length() != 1 || d.Find(`[data-testid=no-tokens]`).Length() != 0 {
		t.Error("the page with one token does not list it")
	}
}
