package web_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"
	"strings"
	"testing"

	"workbench/web"
)

// ssoClient walks the sign-in round trip without a browser: portal →
// provider (form post) → portal callback. It returns the callback's
// response (not followed) and the callback URL.
func ssoClient(t *testing.T) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// ssoRoundTrip starts a sign-in at the portal and signs in as login at the
// provider; it returns the callback URL the provider sent the browser to.
func ssoRoundTrip(t *testing.T, p *testPortal, c *http.Client, login string) string {
	t.Helper()
	res, err := c.Get(p.ts.URL + "/login/oidc?next=/usage")
	if err != nil || res.StatusCode != http.StatusFound {
		t.Fatalf("start sign-in: %v %v", err, statusOf(res))
	}
	res.Body.Close()
	auth, _ := url.Parse(res.Header.Get("Location"))
	res, err = c.PostForm(auth.String(), url.Values{"login": {login}})
	if err != nil || res.StatusCode != http.StatusFound {
		t.Fatalf("provider sign-in: %v %v", err, statusOf(res))
	}
	res.Body.Close()
	return res.Header.Get("Location")
}

func getBody(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	res, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, string(b)
}

// TestOIDCCallbackRefusals: the callback accepts only the sign-in this
// browser started, once: a callback from another browser (login CSRF), a
// replayed callback and a provider's error all end on the login page with
// a reason and no session.
func TestOIDCCallbackRefusals(t *testing.T) {
	idp := newTestIdP(t)
	p := ssoPortal(t, idp)
	idp.setUser("carol", idpUser{Subject: "s-carol", Username: "carol"})

	// Login CSRF: the attacker's own callback URL opened in the victim's browser.
	attacker, victim := ssoClient(t), ssoClient(t)
	cb := ssoRoundTrip(t, p, attacker, "carol")
	if res, body := getBody(t, victim, cb); res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "not started here") {
		t.Fatalf("callback in another browser: %d", res.StatusCode)
	}
	if res, _ := getBody(t, victim, p.ts.URL+"/"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the victim is signed in after a foreign callback: %d", res.StatusCode)
	}

	// The rightful browser: signed in, sent to next; a replay is refused.
	c := ssoClient(t)
	cb = ssoRoundTrip(t, p, c, "carol")
	res, _ := getBody(t, c, cb)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/usage" {
		t.Fatalf("callback: %d → %s, want 303 to /usage", res.StatusCode, res.Header.Get("Location"))
	}
	if res, _ := getBody(t, c, p.ts.URL+"/usage"); res.StatusCode != http.StatusOK {
		t.Fatalf("signed in: /usage %d", res.StatusCode)
	}
	if res, _ := getBody(t, c, cb); res.StatusCode != http.StatusBadRequest {
		t.Errorf("replayed callback: %d, want 400", res.StatusCode)
	}

	// The provider says no.
	c = ssoClient(t)
	cb = ssoRoundTrip(t, p, c, "nobody")
	if res, body := getBody(t, c, cb); res.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "unknown user") {
		t.Errorf("provider error: %d", res.StatusCode)
	}

	// A code the provider refuses (here: already exchanged by someone
	// else) fails the exchange.
	c = ssoClient(t)
	cb = ssoRoundTrip(t, p, c, "carol")
	u, _ := url.Parse(cb)
	idp.mu.Lock()
	delete(idp.codes, u.Query().Get("code"))
	idp.mu.Unlock()
	if res, body := getBody(t, c, cb); res.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "code exchange") {
		t.Errorf("refused code exchange: %d", res.StatusCode)
	}

	// A directory identity without a usable username claim makes nothing.
	idp.setUser("noname", idpUser{Subject: "s-noname", Username: ""})
	c = ssoClient(t)
	if res, body := getBody(t, c, ssoRoundTrip(t, p, c, "noname")); res.StatusCode != http.StatusForbidden || !strings.Contains(body, "no usable username") {
		t.Errorf("no username claim: %d", res.StatusCode)
	}

	// An SSO account has no password to sign in with.
	res2 := p.postForm(p.client(), "/login", url.Values{"username": {"carol"}, "password": {""}})
	if res2.StatusCode == http.StatusSeeOther {
		t.Error("an SSO account signed in with an empty password")
	}
}

// TestOIDCGroupsSameName: without a group map a directory group joins the
// portal group of the same name, when there is one, and leaves it when the
// directory says so; other directory groups make nothing.
func TestOIDCGroupsSameName(t *testing.T) {
	idp := newTestIdP(t)
	p := ssoPortal(t, idp, func(c *web.Config) { c.OIDCGroupMap = ""; c.LocalLogin = "all" })
	ctx := context.Background()
	if _, err := p.srv.Store.CreateGroup(ctx, "physics", ""); err != nil {
		t.Fatal(err)
	}
	signIn := func(groups ...string) []string {
		idp.setUser("erin", idpUser{Subject: "s-erin", Username: "erin", Groups: groups})
		c := ssoClient(t)
		if res, _ := getBody(t, c, ssoRoundTrip(t, p, c, "erin")); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("sign-in: %d", res.StatusCode)
		}
		u, err := p.srv.Store.UserByUsername(ctx, "erin")
		if err != nil {
			t.Fatal(err)
		}
		g, _ := p.srv.Store.UserGroups(ctx, u.ID)
		return g
	}
	if g := signIn("Physics", "chemistry"); !slices.Equal(g, []string{"physics"}) {
		t.Fatalf("groups %v, want [physics]", g)
	}
	if _, err := p.srv.Store.GroupByName(ctx, "chemistry"); err == nil {
		t.Error("an unmapped directory group made a portal group")
	}
	if g := signIn("chemistry"); len(g) != 0 {
		t.Fatalf("groups %v after leaving physics, want none", g)
	}
}

// TestOIDCProviderDown: the portal starts while the provider is
// unreachable, admins still sign in with their password, and the SSO
// button answers with a clear message instead of an error page.
func TestOIDCProviderDown(t *testing.T) {
	idp := newTestIdP(t)
	idp.srv.Close()
	p := ssoPortal(t, idp)
	res, body := getBody(t, ssoClient(t), p.ts.URL+"/login/oidc")
	if res.StatusCode != http.StatusBadGateway || !strings.Contains(body, "cannot be reached") {
		t.Fatalf("SSO with the provider down: %d", res.StatusCode)
	}
	c := p.client()
	p.login(c, "admin", adminPassword)
}

func TestConfigOIDC(t *testing.T) {
	base := func() web.Config {
		return web.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), GPUs: "none", Currency: "USD", LogFormat: "text", LogLevel: "info"}
	}
	for _, tc := range []struct {
		name string
		set  func(*web.Config)
		want string // "" valid, else a word of the error
	}{
		{"off", func(*web.Config) {}, ""},
		{"complete", func(c *web.Config) {
			c.OIDCIssuer, c.OIDCClientID, c.OIDCUsernameClaim = "https://sso.example.org/realms/lab", "workbench", "preferred_username"
			c.OIDCGroupMap, c.LocalLogin = "cn=ml,ou=groups,dc=lab=ml;physics=physics", "admins"
		}, ""},
		{"no client id", func(c *web.Config) {
			c.OIDCIssuer, c.OIDCUsernameClaim = "https://sso.example.org", "preferred_username"
		}, "WORKBENCH_OIDC_CLIENT_ID"},
		{"bad issuer", func(c *web.Config) { c.OIDCIssuer, c.OIDCClientID = "sso.example.org", "x" }, "WORKBENCH_OIDC_ISSUER"},
		{"bad map", func(c *web.Config) {
			c.OIDCIssuer, c.OIDCClientID, c.OIDCUsernameClaim, c.OIDCGroupMap = "https://sso.example.org", "x", "sub", "ml"
		}, "WORKBENCH_OIDC_GROUP_MAP"},
		{"admins-only without SSO", func(c *web.Config) { c.LocalLogin = "admins" }, "WORKBENCH_LOCAL_LOGIN"},
		{"bad local login", func(c *web.Config) { c.LocalLogin = "nobody" }, "WORKBENCH_LOCAL_LOGIN"},
	} {
		c := base()
		tc.set(&c)
		err := c.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error naming %s", tc.name, err, tc.want)
		}
	}
}
