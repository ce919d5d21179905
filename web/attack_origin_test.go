package web_test

// Attacks on path mode, where a notebook runs in the portal's own origin:
// what notebook script can do with the user's session, and what stops it.

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
	"workbench/web"
)

// Notebook script can send requests with the admin's session, but cannot
// type the password: admin changes and API tokens made through a session
// need a confirmation from the last 10 minutes.
func TestSudoRequiredForAdminMutationsViaSession(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	admin := p.client()
	p.login(admin, "admin", adminPassword)

	// A form post gets the confirm page, which carries the form to post it again.
	newUser := url.Values{"username": {"mallory"}, "password": {"mallory-password"}, "role": {"admin"}}
	res, body := p.postFormBody(admin, "/admin/users", newUser)
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("admin form post without sudo: %d, want 403", res.StatusCode)
	}
	doc := parseHTML(t, body)
	if doc.Find(`[data-testid=sudo-form][action="/admin/users"] input[type=hidden][name=username][value=mallory]`).Length() != 1 {
		t.Fatalf("the confirm page does not carry the form: %s", body)
	}
	if _, err := p.srv.Store.UserByUsername(ctx, "mallory"); err == nil {
		t.Fatal("the user was created without a password confirmation")
	}

	// The JSON API with the session cookie: 403 sudo_required.
	for _, rq := range []struct{ method, path, body string }{
		{"POST", "/api/v1/admin/users", `{"username":"mallory2","password":"mallory-password","role":"admin"}`},
		{"POST", "/api/v1/tokens", `{"name":"stolen","expires_days":0}`},
		{"PUT", "/api/v1/admin/prices", `{"rates":[{"resource":"cpu","rate_micros":1}]}`},
	} {
		code, out := p.sessionAPI(admin, rq.method, rq.path, rq.body)
		if code != http.StatusForbidden || errCode(out) != "sudo_required" {
			t.Errorf("%s %s via session without sudo: %d %v, want 403 sudo_required", rq.method, rq.path, code, out)
		}
	}
	if toks, _ := p.srv.Store.ListTokens(ctx, 1); len(toks) != 0 {
		t.Fatalf("a token was minted without a password confirmation: %+v", toks)
	}
	// Token creation through the page too.
	if res, body := p.postFormBody(admin, "/settings/tokens", url.Values{"name": {"stolen"}, "expires_days": {"0"}}); res.StatusCode != http.StatusForbidden ||
		!strings.Contains(body, `data-testid="sudo-form"`) {
		t.Fatalf("token form without sudo: %d", res.StatusCode)
	}

	// A wrong password is refused and changes nothing.
	wrong := url.Values{"sudo_password": {"not-it"}}
	for k, v := range newUser {
		wrong[k] = v
	}
	if res, body := p.postFormBody(admin, "/admin/users", wrong); res.StatusCode != http.StatusForbidden || !strings.Contains(body, "sudo-error") {
		t.Fatalf("wrong sudo password: %d", res.StatusCode)
	}
	if _, err := p.srv.Store.UserByUsername(ctx, "mallory"); err == nil {
		t.Fatal("the user was created with a wrong password confirmation")
	}
	// A signed-in session typing a wrong password is audited (a stolen
	// session guessing its way into sudo mode leaves a trace).
	if entries, _ := p.srv.Store.ListAudit(ctx, 5); len(entries) == 0 || entries[0].Action != "session.wrong_password" ||
		entries[0].Actor != "admin" || !strings.Contains(entries[0].After, `"route":"/admin/users"`) {
		t.Fatalf("the wrong confirmation is not audited: %+v", entries)
	}

	// The confirm page's re-post with the right password does the change.
	right := url.Values{"sudo_password": {adminPassword}}
	for k, v := range newUser {
		right[k] = v
	}
	if res, _ := p.postFormBody(admin, "/admin/users", right); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("re-post with the password: %d, want 303", res.StatusCode)
	}
	if _, err := p.srv.Store.UserByUsername(ctx, "mallory"); err != nil {
		t.Fatal("the confirmed form did not create the user")
	}
	// Within the window, further changes in the pages need no password;
	// the JSON API does not take a page's confirmation (a notebook's
	// script could use the window with fetch()), it takes its own.
	if res := p.postForm(admin, "/settings/tokens", url.Values{"name": {"mine"}, "expires_days": {"1"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("token form in sudo mode: %d", res.StatusCode)
	}
	if code, out := p.sessionAPI(admin, "POST", "/api/v1/tokens", `{"name":"mine2","expires_days":1}`); code != http.StatusForbidden || errCode(out) != "sudo_required" {
		t.Fatalf("token via session API after a page's confirmation: %d %v; want 403 sudo_required", code, out)
	}
	if code, _ := p.sessionAPI(admin, "POST", "/api/v1/sudo", `{"password":"`+adminPassword+`"}`); code != http.StatusNoContent {
		t.Fatalf("API sudo: %d", code)
	}
	if code, out := p.sessionAPI(admin, "POST", "/api/v1/tokens", `{"name":"mine2","expires_days":1}`); code != http.StatusCreated {
		t.Fatalf("token via session API in API sudo mode: %d %v", code, out)
	}

	// API tokens are exempt: they were made in sudo mode.
	tok := tokenFor(t, p, "admin", "admin")
	if code, out := p.api("POST", "/api/v1/admin/users", tok, `{"username":"bot","password":"bot-password-1","role":"user"}`); code != http.StatusCreated {
		t.Fatalf("admin API with a token: %d %v", code, out)
	}
	// A fresh session confirms through the API.
	other := p.client()
	p.login(other, "admin", adminPassword)
	if code, _ := p.sessionAPI(other, "POST", "/api/v1/sudo", `{"password":"nope"}`); code != http.StatusForbidden {
		t.Fatalf("API sudo with a wrong password: %d", code)
	}
	if code, _ := p.sessionAPI(other, "POST", "/api/v1/sudo", `{"password":"`+adminPassword+`"}`); code != http.StatusNoContent {
		t.Fatalf("API sudo: %d", code)
	}
	if code, out := p.sessionAPI(other, "POST", "/api/v1/admin/users", `{"username":"carol","password":"carol-password","role":"user"}`); code != http.StatusCreated {
		t.Fatalf("admin API via session after sudo: %d %v", code, out)
	}
}

// Requests that the browser says come from a notebook page (/wb/…) on the
// portal's origin get 403 when they use the session.
func TestRequestsFromNotebookPagesRefused(t *testing.T) {
	p := newPortal(t)
	c := p.client()
	p.loginSudo(c, "admin", adminPassword)
	nb := p.ts.URL + "/wb/abc123/lab/tree/x.ipynb"

	send := func(method, path string, hdr map[string]string) int {
		req, _ := http.NewRequest(method, p.ts.URL+path, strings.NewReader(`{"name":"x","expires_days":1}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		req.Header.Set("Origin", p.ts.URL)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	fetchFromNotebook := map[string]string{"Referer": nb, "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"}
	if got := send("GET", "/api/v1/me", fetchFromNotebook); got != http.StatusForbidden {
		t.Errorf("fetch of /api/v1/me from a notebook: %d, want 403", got)
	}
	if got := send("POST", "/api/v1/tokens", fetchFromNotebook); got != http.StatusForbidden {
		t.Errorf("token POST from a notebook (even in sudo mode): %d, want 403", got)
	}
	if got := send("GET", "/admin/users", map[string]string{"Referer": nb, "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe"}); got != http.StatusForbidden {
		t.Errorf("/admin/users in a frame of a notebook: %d, want 403", got)
	}
	// The icon a browser asks for on a /wb/ page that names none (an app on
	// an extra port, the proxy's error pages) is no request of the
	// notebook's: it leads to the logo and is not refused (nor logged).
	if got := send("GET", "/favicon.ico", map[string]string{"Referer": nb, "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}); got != http.StatusMovedPermanently {
		t.Errorf("favicon from a notebook page: %d, want 301 to the logo", got)
	}
	// A link followed from a notebook is a top-level navigation: it passes.
	if got := send("GET", "/", map[string]string{"Referer": nb, "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}); got != http.StatusOK {
		t.Errorf("top-level navigation from a notebook: %d, want 200", got)
	}
	// The same requests from the portal's own pages pass (the JSON API
	// with its own confirmation).
	if code, _ := p.sessionAPI(c, "POST", "/api/v1/sudo", `{"password":"`+adminPassword+`"}`); code != http.StatusNoContent {
		t.Fatalf("API sudo: %d", code)
	}
	portal := map[string]string{"Referer": p.ts.URL + "/settings/tokens", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"}
	if got := send("GET", "/api/v1/me", portal); got != http.StatusOK {
		t.Errorf("fetch from a portal page: %d, want 200", got)
	}
	if got := send("POST", "/api/v1/tokens", portal); got != http.StatusCreated {
		t.Errorf("token POST from a portal page in sudo mode: %d, want 201", got)
	}
}

// A sudo-guarded form is taken only from the portal's own pages. Script
// in a path-mode notebook submitted the SSH-key form with its Referer
// suppressed: the user got a genuine "Confirm your password" page for the
// attacker's key, and within 10 minutes of any confirmation none at all.
func TestSudoFormsOnlyFromPortalPages(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	c := p.client()
	p.login(c, "admin", adminPassword)
	key := url.Values{"name": {"laptop"}, "public_key": {"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJDwmmrccY+gbQ6OX+6JC/QB7/J79rHn7z1bEiTiFK7p attacker"}}
	send := func(hdr map[string]string) (int, string) {
		req, _ := http.NewRequest("POST", p.ts.URL+"/settings/ssh-keys", strings.NewReader(key.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		req.Header.Set("Origin", p.ts.URL)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	keys := func() int {
		u, _ := p.srv.Store.UserByUsername(ctx, "admin")
		list, err := p.srv.Store.ListSSHKeys(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}
	noReferer := map[string]string{"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
	code, body := send(noReferer)
	if code != http.StatusForbidden || strings.Contains(body, `data-testid="sudo-form"`) || !strings.Contains(body, "did not come from one of the portal") {
		t.Fatalf("form without a Referer, no sudo: %d; want 403 without the confirm page\n%s", code, body)
	}
	// From a portal page the confirm page says what is being confirmed.
	clicked := map[string]string{"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document", "Sec-Fetch-User": "?1", "Referer": p.ts.URL + "/settings/ssh-keys"}
	code, body = send(clicked)
	doc := parseHTML(t, body)
	if code != http.StatusForbidden || doc.Find("[data-testid=sudo-action]").Text() != "/settings/ssh-keys" ||
		!strings.Contains(doc.Find("[data-testid=sudo-fields]").Text(), "laptop") || !strings.Contains(doc.Find("[data-testid=sudo-fields]").Text(), "ssh-ed25519") {
		t.Fatalf("confirm page: %d, action %q, fields %q", code, doc.Find("[data-testid=sudo-action]").Text(), doc.Find("[data-testid=sudo-fields]").Text())
	}
	// Named as a person reads them, not by the form's keys ("public_key").
	if names := doc.Find("[data-testid=sudo-fields] dt").Map(func(_ int, s *goquery.Selection) string { return s.Text() }); !slices.Equal(names, []string{"Name", "Public key"}) {
		t.Errorf("the confirm page names the fields %q", names)
	}
	// Within the sudo window: still only from a portal page, as a navigation.
	p.sudo(c, adminPassword)
	if code, _ := send(noReferer); code != http.StatusForbidden {
		t.Errorf("form without a Referer in sudo mode: %d, want 403", code)
	}
	if code, _ := send(map[string]string{"Sec-Fetch-Mode": "cors", "Referer": p.ts.URL + "/settings/ssh-keys"}); code != http.StatusForbidden {
		t.Errorf("fetch() with a portal Referer in sudo mode: %d, want 403", code)
	}
	if n := keys(); n != 0 {
		t.Fatalf("%d keys were added by requests that were refused", n)
	}
	// A notebook's script that rewrote its address to the portal's page
	// (history.replaceState, same origin in path mode) and submits the
	// form into a hidden iframe, or on its own without a click.
	for _, forged := range []map[string]string{
		{"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe", "Sec-Fetch-User": "?1", "Referer": p.ts.URL + "/settings/ssh-keys"},
		{"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document", "Referer": p.ts.URL + "/settings/ssh-keys"},
	} {
		if code, _ := send(forged); code != http.StatusForbidden {
			t.Errorf("script's form (%v) in sudo mode: %d, want 403", forged, code)
		}
	}
	if code, _ := send(clicked); code != http.StatusSeeOther {
		t.Fatalf("the portal's own form in sudo mode: %d, want 303", code)
	}
	if n := keys(); n != 1 {
		t.Fatalf("the portal's form added %d keys, want 1", n)
	}
}

// Over plain HTTP on a host other than localhost, browsers send no Fetch
// Metadata, and a notebook script that rewrote its address to a portal
// page (history.replaceState) sends the same Referer as that page's form.
// In path mode such a post is not served by the sudo window: each one asks
// for the password, which script cannot type. A notebook domain (script on
// another origin) keeps the window.
func TestSudoWindowNeedsFetchMetadataInPathMode(t *testing.T) {
	for _, tc := range []struct {
		name   string
		domain string
		window bool // whether the window serves a post without Fetch Metadata
	}{{"path mode", "", false}, {"notebook domain", "nb.example.org", true}} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPortal(t, func(c *web.Config) {
				if tc.domain != "" {
					c.PublicURL, c.NotebookDomain = "https://gpu.example.org", tc.domain
				}
			})
			ctx := context.Background()
			c := p.client()
			p.login(c, "admin", adminPassword)
			p.sudo(c, adminPassword)
			if _, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "mallory", Password: "mallory-password", Role: "user"}); err != nil {
				t.Fatal(err)
			}
			mallory, _ := p.srv.Store.UserByUsername(ctx, "mallory")
			post := func(form url.Values) (int, string) {
				req, _ := http.NewRequest("POST", p.ts.URL+"/admin/users/"+itoa(mallory.ID)+"/role", strings.NewReader(form.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set("Origin", p.ts.URL)
				req.Header.Set("Referer", p.ts.URL+"/admin/users") // what the rewritten address sends
				res, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				b, _ := io.ReadAll(res.Body)
				return res.StatusCode, string(b)
			}
			role := func() string {
				u, _ := p.srv.Store.UserByUsername(ctx, "mallory")
				return u.Role
			}
			code, body := post(url.Values{"role": {"admin"}, "confirmed": {"true"}})
			if !tc.window {
				doc := parseHTML(t, body)
				if code != http.StatusForbidden || doc.Find(`[data-testid=sudo-form]`).Length() != 1 || doc.Find(`[data-testid=sudo-per-post]`).Length() != 1 {
					t.Fatalf("post without Fetch Metadata in the sudo window: %d; want 403 with the confirm page and why it asks", code)
				}
				if got := role(); got != "user" {
					t.Fatalf("mallory became %q without a password", got)
				}
				// The person on that browser types the password: done.
				if code, _ := post(url.Values{"role": {"admin"}, "sudo_password": {adminPassword}, "confirmed": {"true"}}); code != http.StatusSeeOther {
					t.Fatalf("the same post with the password: %d, want 303", code)
				}
			} else if code != http.StatusSeeOther {
				t.Fatalf("notebook domain, post in the sudo window: %d, want 303", code)
			}
			if got := role(); got != "admin" {
				t.Fatalf("mallory is %q after the confirmed change", got)
			}
		})
	}
}

// Logging out clears the origin's storage, which unregisters any service
// worker a notebook registered there.
func TestLogoutClearsSiteStorage(t *testing.T) {
	p := newPortal(t)
	c := p.client()
	p.login(c, "admin", adminPassword)
	res := p.postForm(c, "/logout", nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout: %d", res.StatusCode)
	}
	if got := res.Header.Get("Clear-Site-Data"); got != `"storage"` {
		t.Fatalf("Clear-Site-Data = %q, want \"storage\"", got)
	}
}

// Admin pages say plainly what path mode means, and stop saying it once a
// notebook domain is set.
func TestAdminPagesExplainPathMode(t *testing.T) {
	for _, tc := range []struct {
		domain string
		want   int
	}{{"", 1}, {"nb.example.org", 0}} {
		p := newPortal(t, func(c *web.Config) {
			if tc.domain != "" {
				c.PublicURL, c.NotebookDomain = "https://gpu.example.org", tc.domain
			}
		})
		c := p.client()
		p.login(c, "admin", adminPassword)
		for _, path := range []string{"/admin/users", "/admin/quotas", "/admin/prices"} {
			res, body := p.get(c, path)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("%s: %d", path, res.StatusCode)
			}
			n := parseHTML(t, body).Find(`[data-testid=path-mode-notice]`)
			if n.Length() != tc.want || (tc.want == 1 && !strings.Contains(n.Text(), "WORKBENCH_NOTEBOOK_DOMAIN")) {
				t.Errorf("notebook domain %q, %s: %d path-mode notices, want %d", tc.domain, path, n.Length(), tc.want)
			}
		}
	}
}

// The confirmation lasts 10 minutes: a session whose confirmation is older
// is asked again.
func TestSudoExpiresAfterTenMinutes(t *testing.T) {
	p := newPortal(t)
	admin := p.client()
	p.loginSudo(admin, "admin", adminPassword)
	if res := p.postForm(admin, "/admin/groups", url.Values{"name": {"g1"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("admin change in sudo mode: %d", res.StatusCode)
	}
	// Move this session's confirmation 11 minutes into the past.
	u, _ := url.Parse(p.ts.URL)
	var token string
	for _, ck := range admin.Jar.Cookies(u) {
		if ck.Name == web.SessionCookieName {
			token = ck.Value
		}
	}
	sm := p.srv.Sessions()
	ctx, err := sm.Load(context.Background(), token)
	if err != nil || sm.GetInt64(ctx, "sudo_at") == 0 {
		t.Fatalf("load the session: %v (sudo_at %d)", err, sm.GetInt64(ctx, "sudo_at"))
	}
	sm.Put(ctx, "sudo_at", time.Now().Add(-11*time.Minute).Unix())
	if _, _, err := sm.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if res := p.postForm(admin, "/admin/groups", url.Values{"name": {"g2"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("admin change 11 minutes after the confirmation: %d, want 403", res.StatusCode)
	}
	if gs, _ := p.srv.Store.ListGroups(context.Background()); len(gs) != 1 {
		t.Fatalf("%d groups, want 1", len(gs))
	}
}

// Revoking an API token ends it at once, and is audited.
func TestTokenRevokeIsImmediateAndAudited(t *testing.T) {
	p := newPortal(t)
	tok := tokenFor(t, p, "alice", "user")
	victim := tokenFor(t, p, "alice", "user")
	_, list := p.api("GET", "/api/v1/tokens", tok, "")
	var id string
	for _, it := range list["items"].([]any) {
		m := it.(map[string]any)
		if strings.HasPrefix(victim, m["prefix"].(string)) {
			id = itoa(int64(m["id"].(float64)))
		}
	}
	if code, _ := p.api("GET", "/api/v1/me", victim, ""); code != http.StatusOK {
		t.Fatalf("token before revoke: %d", code)
	}
	if code, _ := p.api("DELETE", "/api/v1/tokens/"+id, tok, ""); code != http.StatusNoContent {
		t.Fatalf("revoke: %d", code)
	}
	if code, _ := p.api("GET", "/api/v1/me", victim, ""); code != http.StatusUnauthorized {
		t.Fatalf("revoked token still works: %d", code)
	}
	es, _ := p.srv.Store.ListAudit(context.Background(), 10)
	if len(es) == 0 || es[0].Action != "token.revoke" || es[0].Actor != "alice" {
		t.Fatalf("token revocation not audited: %+v", es)
	}
}

// Every admin mutation and every token creation through a session asks for
// the password first; the table (sudoForms, sudoAPIs) is the route table's
// unsafe admin routes and the other routes behind requireSudo, kept whole
// by TestRouteListsAreComplete.
func TestEveryAdminMutationNeedsSudo(t *testing.T) {
	p := newPortal(t)
	admin := p.client()
	p.login(admin, "admin", adminPassword)
	for _, path := range sudoForms {
		res, body := p.postFormBody(admin, path, url.Values{"x": {"1"}})
		if res.StatusCode != http.StatusForbidden || !strings.Contains(body, `data-testid="sudo-form"`) {
			t.Errorf("POST %s via session without sudo: %d, want 403 with the confirm page", path, res.StatusCode)
		}
	}
	for _, a := range sudoAPIs {
		if code, out := p.sessionAPI(admin, a.method, a.path, `{}`); code != http.StatusForbidden || errCode(out) != "sudo_required" {
			t.Errorf("%s %s via session without sudo: %d %v, want 403 sudo_required", a.method, a.path, code, out)
		}
	}
	// Reading stays open.
	for _, path := range []string{"/admin/users", "/admin/prices", "/admin/audit"} {
		if res, _ := p.get(admin, path); res.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d", path, res.StatusCode)
		}
	}
}

// sudoForms and sudoAPIs are TestEveryAdminMutationNeedsSudo's table: every
// unsafe admin route, and every other route behind requireSudo (token
// creation). TestRouteListsAreComplete (route_lists_test.go) fails when a
// route of the table is missing here.
var sudoForms = []string{
	"/admin/users", "/admin/users/1/disable", "/admin/users/1/role", "/admin/users/1/password", "/admin/groups", "/admin/groups/1/members", "/admin/groups/1/rename", "/admin/groups/1/delete",
	"/admin/groups/1/members/remove", "/admin/groups/1/members/lead", "/admin/workbenches/x/stop", "/admin/workbenches/stop-all", "/admin/gpus/GPU-1/drain", "/admin/images",
	"/admin/images/1", "/admin/flavors", "/admin/flavors/1", "/admin/quotas/default", "/admin/quotas/users/admin",
	"/admin/prices", "/admin/price-tiers", "/admin/calculator/apply-rate", "/admin/cloud-prices", "/admin/cloud-prices/settings",
	"/admin/cloud-prices/1", "/admin/cloud-prices/1/delete", "/admin/users/1/home/reset", "/admin/users/1/login-lock/clear",
	"/admin/users/1/rename", "/admin/users/1/delete",
	"/admin/gpus/GPU-1/share", "/admin/images/1/test", "/admin/images/1/pull", "/admin/images/1/promote", "/admin/images/load",
	"/admin/queue/x/cancel", "/admin/queue/x/boost", "/admin/queue/x/move", "/admin/priority-classes", "/admin/priority-defaults",
	"/admin/reservations/settings", "/admin/reservations/caps",
	"/admin/billing/credit", "/admin/billing/reverse", "/admin/billing/electricity-price", "/admin/egress", "/admin/registries",
	"/settings/tokens", "/workbenches/x/tokens", "/settings/ssh-keys",
}

var sudoAPIs = []struct{ method, path string }{
	{"POST", "/api/v1/images"}, {"PUT", "/api/v1/images/1"}, {"POST", "/api/v1/flavors"}, {"PUT", "/api/v1/flavors/1"},
	{"PUT", "/api/v1/gpus/GPU-1/drain"}, {"POST", "/api/v1/admin/workbenches/x/stop"}, {"PUT", "/api/v1/admin/quotas/default"},
	{"PUT", "/api/v1/admin/quotas/users/admin"}, {"PUT", "/api/v1/admin/prices"}, {"POST", "/api/v1/admin/users"},
	{"POST", "/api/v1/admin/calculator/apply-rate"}, {"PUT", "/api/v1/admin/calculator/settings"},
	{"POST", "/api/v1/admin/cloud-prices"}, {"PUT", "/api/v1/admin/cloud-prices/1"}, {"DELETE", "/api/v1/admin/cloud-prices/1"},
	{"PUT", "/api/v1/gpus/GPU-1/shared"}, {"POST", "/api/v1/images/1/test"}, {"POST", "/api/v1/admin/images/1/promote"},
	{"POST", "/api/v1/admin/images/load"}, {"POST", "/api/v1/admin/queue/x/cancel"}, {"POST", "/api/v1/admin/queue/x/boost"},
	{"POST", "/api/v1/admin/queue/x/move"}, {"PUT", "/api/v1/admin/priority-classes/urgent"},
	{"PUT", "/api/v1/admin/priority-defaults/group/1"}, {"PUT", "/api/v1/admin/reservation-settings"},
	{"PUT", "/api/v1/admin/reservation-caps/user/admin"}, {"POST", "/api/v1/admin/price-tiers"},
	{"POST", "/api/v1/admin/ledger/credits"}, {"POST", "/api/v1/admin/ledger/reversals"},
	{"DELETE", "/api/v1/admin/users/1/login-lock"}, {"PUT", "/api/v1/admin/egress"}, {"PUT", "/api/v1/admin/electricity-price"},
	{"PUT", "/api/v1/admin/registry-mirrors"}, {"PUT", "/api/v1/admin/users/1/role"}, {"PUT", "/api/v1/admin/users/1/disabled"},
	{"PUT", "/api/v1/admin/users/1/username"}, {"DELETE", "/api/v1/admin/users/1"},
	{"POST", "/api/v1/admin/groups"}, {"PUT", "/api/v1/admin/groups/1"}, {"DELETE", "/api/v1/admin/groups/1"},
	{"PUT", "/api/v1/admin/groups/1/members/admin"}, {"DELETE", "/api/v1/admin/groups/1/members/admin"},
	{"PUT", "/api/v1/admin/groups/1/members/admin/lead"}, {"DELETE", "/api/v1/admin/groups/1/members/admin/lead"},
	{"PATCH", "/api/v1/images/1"}, {"PATCH", "/api/v1/flavors/1"},
	{"POST", "/api/v1/tokens"}, {"POST", "/api/v1/workbenches/x/tokens"}, {"POST", "/api/v1/ssh-keys"},
}

// The confirm page names a quota's fields as the console labels them,
// leaves out the form's bookkeeping (the row's version, where to return)
// and shows a new user's role in the reader's words.
func TestSudoPageNamesFieldsAsTheirForms(t *testing.T) {
	p := newPortal(t)
	c := p.client()
	p.login(c, "admin", adminPassword)
	names := func(path string, form url.Values) []string {
		res, body := p.postFormBody(c, path, form)
		if res.StatusCode != http.StatusForbidden {
			t.Fatalf("POST %s without sudo: %d, want the confirm page", path, res.StatusCode)
		}
		return parseHTML(t, body).Find("[data-testid=sudo-fields] dt, [data-testid=sudo-fields] dd").Map(func(_ int, s *goquery.Selection) string { return s.Text() })
	}
	got := names("/admin/quotas/default", url.Values{"max_gpus": {"4"}, "version": {"3900a75315f7ad83"}, "back": {"/admin/quotas?page=2"}})
	if !slices.Equal(got, []string{"GPUs at once", "4"}) {
		t.Errorf("quota confirm shows %q, want only GPUs at once: 4", got)
	}
	got = names("/admin/users", url.Values{"username": {"lin"}, "role": {"user"}, "password": {"a-long-password"}})
	if !slices.Contains(got, "Role") || !slices.Contains(got, "user") || slices.Contains(got, "a-long-password") {
		t.Errorf("new user confirm shows %q", got)
	}
}
