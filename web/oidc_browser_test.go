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
	"workbench/web"
)

// ssoPortal starts a portal whose single sign-on is the test provider:
// directory group "ml-lab" maps to portal group "ml", password sign-in is
// for admins only.
func ssoPortal(t *testing.T, idp *testIdP, mutate ...func(*web.Config)) *testPortal {
	t.Helper()
	return newPortal(t, append([]func(*web.Config){ssoConfig(idp)}, mutate...)...)
}

// ssoConfig points a portal's single sign-on at idp.
func ssoConfig(idp *testIdP) func(*web.Config) {
	return func(c *web.Config) {
		c.OIDCIssuer, c.OIDCClientID, c.OIDCClientSecret = idp.srv.URL, idp.clientID, idp.clientSecret
		c.OIDCScopes, c.OIDCUsernameClaim, c.OIDCGroupsClaim = "openid profile email groups", "preferred_username", "groups"
		c.OIDCGroupMap = "ml-lab=ml"
		c.OIDCLabel = "Lab Directory"
		c.LocalLogin = "admins"
	}
}

// btSSOSignIn clicks "Sign in with …" on the portal's login page, types
// login on the provider's page and submits; it returns the page the
// round trip ends on.
func btSSOSignIn(t *testing.T, ctx context.Context, p *testPortal, idp *testIdP, login string) (int64, *url.URL) {
	t.Helper()
	btNavigate(t, ctx, p.ts.URL+"/login")
	btSubmit(t, ctx, "click the single sign-on button", chromedp.Click(chromedp.CSS(`[data-testid=login-sso]`)))
	if loc := btLocation(t, ctx); "http://"+loc.Host != idp.srv.URL || loc.Path != "/auth" {
		t.Fatalf("the SSO button leads to %s, want the provider's /auth", loc)
	}
	btDo(t, ctx, "type the login at the provider",
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=idp-login]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=idp-login]`), login))
	resp := btSubmit(t, ctx, "sign in at the provider", chromedp.Click(chromedp.CSS(`[data-testid=idp-signin]`)))
	return resp.Status, btLocation(t, ctx)
}

// TestOIDCSignInBrowser: single sign-on in Chromium against a real OIDC
// provider on loopback: the login redirect carries state, nonce and a PKCE
// challenge; the code exchange and ID token check sign a new user in and
// make the account with the mapped groups; ID tokens with the wrong
// audience, expired, badly signed or with another sign-in's nonce are
// refused; a disabled account is refused; logout ends the portal session;
// password sign-in is refused to non-admins; the directory's groups are
// followed at the next sign-in.
func TestOIDCSignInBrowser(t *testing.T) {
	idp := newTestIdP(t)
	p := ssoPortal(t, idp)
	ctx := btNewBrowser(t)
	store := p.srv.Store
	bg := context.Background()
	idp.setUser("carol", idpUser{Subject: "sub-0001-carol", Username: "Carol", Email: "carol@lab.example", Name: "Carol Chen",
		Groups: []string{"ml-lab", "staff"}})

	// The ID token refusals first: nothing may be made by them.
	for _, mode := range []string{"audience", "expired", "signature", "nonce"} {
		idp.setTamper(mode)
		status, loc := btSSOSignIn(t, ctx, p, idp, "carol")
		if status != http.StatusUnauthorized || loc.Path != "/login/oidc/callback" {
			t.Fatalf("%s: the callback answered %d at %s, want 401", mode, status, loc)
		}
		if msg := btText(t, ctx, `[data-testid=login-error]`); !strings.Contains(msg, "could not be verified") {
			t.Errorf("%s: the page says %q", mode, msg)
		}
		if _, err := store.UserByUsername(bg, "carol"); err == nil {
			t.Fatalf("%s: an account was made from a refused ID token", mode)
		}
	}
	btScreenshot(t, ctx, "oidc-refused.png")
	idp.setTamper("")

	// The real thing: first sign-in makes the account.
	status, loc := btSSOSignIn(t, ctx, p, idp, "carol")
	if status != http.StatusOK || loc.Path != "/" {
		t.Fatalf("sign-in ended at %d %s", status, loc)
	}
	q := idp.lastAuthorizeQuery()
	if q.Get("state") == "" || q.Get("nonce") == "" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" ||
		!strings.Contains(q.Get("scope"), "openid") || q.Get("redirect_uri") != p.ts.URL+"/login/oidc/callback" {
		t.Errorf("authorization request %v lacks state, nonce, PKCE or the right redirect", q)
	}
	if got := btText(t, ctx, `[data-testid=account-name]`); got != "Carol Chen" {
		t.Errorf("signed in as %q, want Carol Chen", got)
	}
	btScreenshot(t, ctx, "oidc-signed-in.png")
	carol, err := store.UserByUsername(bg, "carol")
	if err != nil {
		t.Fatalf("no account made on first sign-in: %v", err)
	}
	if !carol.SSO() || carol.Email != "carol@lab.example" || carol.IsAdmin() || carol.PasswordHash != "" {
		t.Errorf("account made: %+v", carol)
	}
	groups, _ := store.UserGroups(bg, carol.ID)
	if !slices.Equal(groups, []string{"ml"}) {
		t.Errorf("portal groups %v, want [ml] (ml-lab mapped; staff not mapped)", groups)
	}

	// Logout ends the portal session.
	btSubmit(t, ctx, "log out", chromedp.Click(chromedp.CSS(`form[action="/logout"] button`)))
	btNavigate(t, ctx, p.ts.URL+"/")
	if loc := btLocation(t, ctx); loc.Path != "/login" {
		t.Fatalf("after logout / is at %s, want the login page", loc)
	}

	// The directory moved carol out of ml-lab: the next sign-in follows.
	idp.setUser("carol", idpUser{Subject: "sub-0001-carol", Username: "Carol", Email: "carol@lab.example", Name: "Carol Chen"})
	if status, loc := btSSOSignIn(t, ctx, p, idp, "carol"); status != http.StatusOK || loc.Path != "/" {
		t.Fatalf("second sign-in ended at %d %s", status, loc)
	}
	if groups, _ := store.UserGroups(bg, carol.ID); len(groups) != 0 {
		t.Errorf("after leaving ml-lab carol is in %v", groups)
	}
	btSubmit(t, ctx, "log out", chromedp.Click(chromedp.CSS(`form[action="/logout"] button`)))

	// A disabled account is refused.
	if err := store.SetUserDisabled(bg, carol.ID, true); err != nil {
		t.Fatal(err)
	}
	status, _ = btSSOSignIn(t, ctx, p, idp, "carol")
	if msg := btText(t, ctx, `[data-testid=login-error]`); status != http.StatusForbidden || !strings.Contains(msg, "disabled") {
		t.Fatalf("disabled account: %d %q", status, msg)
	}
	btScreenshot(t, ctx, "oidc-disabled.png")

	// A directory user whose username is a local account's is not linked
	// to it (that would hand the local account to the directory).
	idp.setUser("mallory", idpUser{Subject: "sub-0002", Username: "admin"})
	status, _ = btSSOSignIn(t, ctx, p, idp, "mallory")
	if status != http.StatusConflict {
		t.Fatalf("directory user named like the local admin: %d, want 409", status)
	}
	if admin, _ := store.UserByUsername(bg, "admin"); admin.SSO() {
		t.Fatal("the local admin account was linked to a directory identity")
	}

	// Password sign-in: refused to a non-admin, kept for admins.
	if _, err := store.CreateUser(bg, models.NewUser{Username: "dave", Password: "dave-password-1"}); err != nil {
		t.Fatal(err)
	}
	btNavigate(t, ctx, p.ts.URL+"/login")
	if !btVisible(t, ctx, `[data-testid=login-local-admins]`) {
		t.Error("the login page does not say password sign-in is for admins")
	}
	if resp := btLogin(t, ctx, "dave", "dave-password-1"); resp.Status != http.StatusForbidden {
		t.Fatalf("a non-admin's password sign-in: %d, want 403", resp.Status)
	}
	if msg := btText(t, ctx, `[data-testid=login-error]`); !strings.Contains(msg, "Lab Directory") {
		t.Errorf("refusal says %q", msg)
	}
	if resp := btLogin(t, ctx, "admin", adminPassword); resp.Status != http.StatusOK || btLocation(t, ctx).Path != "/" {
		t.Fatalf("admin password sign-in: %d at %s", resp.Status, btLocation(t, ctx))
	}

	// The admin sees which accounts come from the directory.
	btNavigate(t, ctx, p.ts.URL+"/admin/users")
	if got := btTexts(t, ctx, `[data-testid=user-row][data-username=carol] [data-testid=user-sso]`); len(got) != 1 {
		t.Errorf("carol's row has no SSO badge: %v", got)
	}
	if got := btTexts(t, ctx, `[data-testid=user-row][data-username=dave] [data-testid=user-sso]`); len(got) != 0 {
		t.Errorf("a local account has an SSO badge: %v", got)
	}
	btScreenshot(t, ctx, "oidc-admin-users.png")
}
