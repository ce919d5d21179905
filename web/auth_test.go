package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"workbench/models"
	"workbench/web"
)

func TestSessionCookieFlags(t *testing.T) {
	for _, tc := range []struct {
		publicURL  string
		wantSecure bool
	}{{"", false}, {"https://gpu.example.org", true}} {
		p := newPortal(t, func(c *web.Config) { c.PublicURL = tc.publicURL })
		c := p.client()
		req, _ := http.NewRequest(http.MethodPost, p.ts.URL+"/login", strings.NewReader(url.Values{"username": {"admin"}, "password": {adminPassword}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		ck := sessionCookie(res)
		if ck == nil {
			t.Fatalf("public URL %q: no session cookie after login (status %d)", tc.publicURL, res.StatusCode)
		}
		if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Secure != tc.wantSecure {
			t.Errorf("public URL %q: cookie HttpOnly=%v SameSite=%v Secure=%v", tc.publicURL, ck.HttpOnly, ck.SameSite, ck.Secure)
		}
		if len(ck.Value) < 43 { // 32 random bytes, base64
			t.Errorf("session token too short: %d chars", len(ck.Value))
		}
	}
}

func TestLoginRotatesSessionAndLogoutInvalidates(t *testing.T) {
	p := newPortal(t)
	c := p.client()
	res := p.postForm(c, "/login", url.Values{"username": {"admin"}, "password": {adminPassword}})
	first := sessionCookie(res)
	if first == nil {
		t.Fatal("no cookie")
	}
	// Logging in again while holding a session must hand out a new token
	// and retire the old one (no session fixation).
	res = p.postForm(c, "/login", url.Values{"username": {"admin"}, "password": {adminPassword}})
	second := sessionCookie(res)
	if second == nil || second.Value == first.Value {
		t.Fatal("session token not rotated at login")
	}
	replay := p.client()
	u, _ := url.Parse(p.ts.URL)
	replay.Jar.SetCookies(u, []*http.Cookie{{Name: web.SessionCookieName, Value: first.Value}})
	if res, _ := p.get(replay, "/gpus"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("old token still valid after rotation: %d", res.StatusCode)
	}
	if res, _ := p.get(c, "/gpus"); res.StatusCode != http.StatusOK {
		t.Fatalf("logged-in /gpus: %d", res.StatusCode)
	}
	p.postForm(c, "/logout", nil)
	// Replaying the cookie after logout must not work: the server forgot it.
	stolen := p.client()
	stolen.Jar.SetCookies(u, []*http.Cookie{{Name: web.SessionCookieName, Value: second.Value}})
	if res, _ := p.get(stolen, "/gpus"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/login") {
		t.Fatalf("session survived logout: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
}

func TestSessionIdleExpiry(t *testing.T) {
	p := newPortal(t, func(c *web.Config) { c.SessionIdle = time.Second; c.SessionMaxAge = time.Hour })
	c := p.client()
	p.login(c, "admin", adminPassword)
	if res, _ := p.get(c, "/gpus"); res.StatusCode != http.StatusOK {
		t.Fatalf("fresh session: %d", res.StatusCode)
	}
	time.Sleep(1500 * time.Millisecond)
	if res, _ := p.get(c, "/gpus"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("idle session still valid: %d", res.StatusCode)
	}
}

func TestLoginThrottleAndGenericErrors(t *testing.T) {
	p := newPortal(t)
	c := p.client()
	_, unknown := p.get(c, "/login") // warm up
	_ = unknown
	res := p.postForm(c, "/login", url.Values{"username": {"nobody"}, "password": {"whatever-123"}})
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("unknown user: %d", res.StatusCode)
	}
	for i := 0; i < 5; i++ {
		res := p.postForm(c, "/login", url.Values{"username": {"admin"}, "password": {"wrong-password"}})
		if res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("failure %d: status %d", i, res.StatusCode)
		}
	}
	// Spoofing X-Forwarded-For does not buy a fresh budget.
	req, _ := http.NewRequest(http.MethodPost, p.ts.URL+"/login", strings.NewReader(url.Values{"username": {"admin"}, "password": {adminPassword}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Forwarded-For", "203.0.113.9")
	if res, err := c.Do(req); err != nil || res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("spoofed X-Forwarded-For escaped the throttle: %v %v", res.StatusCode, err)
	}
	// Now even the right password is refused for a while.
	res = p.postForm(c, "/login", url.Values{"username": {"admin"}, "password": {adminPassword}})
	if res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("after 5 failures: status %d, want 429", res.StatusCode)
	}
}

func TestLoginErrorIsTheSameForUnknownAndWrong(t *testing.T) {
	p := newPortal(t)
	body := func(user string) string {
		req, _ := http.NewRequest(http.MethodPost, p.ts.URL+"/login", strings.NewReader(url.Values{"username": {user}, "password": {"bad-password-9"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		s := string(raw)
		i := strings.Index(s, `data-testid="login-error"`)
		if i < 0 {
			t.Fatalf("no login error for %s", user)
		}
		return s[i : i+80]
	}
	if a, b := body("admin"), body("ghost"); a != b {
		t.Fatalf("login errors differ:\n%s\n%s", a, b)
	}
}

func TestCrossOriginPostRefused(t *testing.T) {
	p := newPortal(t)
	c := p.client()
	p.loginSudo(c, "admin", adminPassword)
	form := url.Values{"name": {"g1"}}.Encode()
	send := func(hdr map[string]string) int {
		req, _ := http.NewRequest(http.MethodPost, p.ts.URL+"/admin/groups", strings.NewReader(form))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
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
	if got := send(map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}); got != http.StatusForbidden {
		t.Fatalf("cross-site POST: %d, want 403", got)
	}
	if got := send(map[string]string{"Origin": "https://evil.example"}); got != http.StatusForbidden {
		t.Fatalf("foreign-origin POST: %d, want 403", got)
	}
	if gs, _ := p.srv.Store.ListGroups(context.Background()); len(gs) != 0 {
		t.Fatalf("refused request still created %d groups", len(gs))
	}
	// From a portal page, as a browser submits its form (sudo-guarded forms
	// need that Referer).
	if got := send(map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": p.ts.URL, "Referer": p.ts.URL + "/admin/groups", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document", "Sec-Fetch-User": "?1"}); got != http.StatusSeeOther {
		t.Fatalf("same-origin POST: %d, want 303", got)
	}
	if gs, _ := p.srv.Store.ListGroups(context.Background()); len(gs) != 1 {
		t.Fatalf("same-origin POST did not create the group")
	}
}

// A form sent again from a page the browser dropped (Back, then Reload:
// Chrome resends it with "Origin: null") is refused like any cross-origin
// post, but a person reads a page saying nothing changed and what to do,
// in their language, not the API's JSON; a script still gets JSON.
func TestResentFormRefusedWithAPage(t *testing.T) {
	p := newPortal(t)
	c := p.client()
	p.loginSudo(c, "admin", adminPassword)
	send := func(path, accept, lang string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, p.ts.URL+path, strings.NewReader(url.Values{"name": {"g1"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "null")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		req.Header.Set("Accept", accept)
		req.Header.Set("Accept-Language", lang)
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	const browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	res, body := send("/admin/groups", browser, "en")
	if res.StatusCode != http.StatusForbidden || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(body, "nothing was changed") || mpDoc(t, body).Find(`[data-testid=error]`).Length() != 1 {
		t.Fatalf("a resent form: %d %s %q", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	if _, body := send("/admin/groups", browser, "zh-CN"); !strings.Contains(body, "没有做任何更改") {
		t.Errorf("the page in Chinese: %q", body)
	}
	if res, body := send("/api/v1/admin/groups", "*/*", "en"); res.StatusCode != http.StatusForbidden || !strings.Contains(body, `"cross_origin"`) {
		t.Fatalf("an API client: %d %q", res.StatusCode, body)
	}
	if gs, _ := p.srv.Store.ListGroups(context.Background()); len(gs) != 0 {
		t.Fatalf("refused requests created %d groups", len(gs))
	}
}

func TestDisabledUserLosesAccess(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	u, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "alice", Password: "alice-password"})
	if err != nil {
		t.Fatal(err)
	}
	c := p.client()
	p.login(c, "alice", "alice-password")
	_, secret, _ := p.srv.Store.CreateToken(ctx, u.ID, "t", 0)
	if code, _ := p.api("GET", "/api/v1/me", secret, ""); code != 200 {
		t.Fatalf("token before disable: %d", code)
	}
	// A booking of 3 GPUs from tomorrow: disabling the account releases
	// it (nobody could use the units it holds).
	start := time.Now().UTC().Add(24 * time.Hour).Truncate(time.Minute)
	if res := p.postForm(c, "/reservations", resvForm(resvH100, 3, start, start.Add(2*time.Hour), "")); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("book: %d", res.StatusCode)
	}
	admin := p.client()
	p.loginSudo(admin, "admin", adminPassword)
	if res := p.postForm(admin, "/admin/users/"+itoa(u.ID)+"/disable", url.Values{"disabled": {"true"}, "confirmed": {"true"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("disable: %d", res.StatusCode)
	}
	if left, _ := p.srv.Store.Reservations(ctx, time.Now()); len(left) != 0 {
		t.Errorf("the disabled user's booking still holds units: %+v", left)
	}
	if _, page := p.get(admin, "/admin/users"); !strings.Contains(page, "Their GPU booking was released.") {
		t.Error("the admin is not told the booking was released")
	}
	// Audited once; disabling an account without bookings audits nothing
	// of the kind.
	bob, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "bob", Password: "bob-password"})
	if err != nil {
		t.Fatal(err)
	}
	if res := p.postForm(admin, "/admin/users/"+itoa(bob.ID)+"/disable", url.Values{"disabled": {"true"}, "confirmed": {"true"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("disable bob: %d", res.StatusCode)
	}
	if rows, _, err := p.srv.Store.AuditPage(ctx, "reservation.release_all", "admin", 0, 10); err != nil || len(rows) != 1 || rows[0].Target != "alice" {
		t.Errorf("release audit rows %+v (%v), want alice's only", rows, err)
	}
	if res, _ := p.get(c, "/gpus"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("disabled user's session still works: %d", res.StatusCode)
	}
	if code, body := p.api("GET", "/api/v1/me", secret, ""); code != 401 || errCode(body) != "invalid_token" {
		t.Fatalf("disabled user's token: %d %v", code, body)
	}
	// Her right password is refused with the reason, and, however often she
	// retries, it is no failed guess: the throttle does not lock her name
	// or her address (a colleague behind the same NAT logs in after).
	for i := 0; i < 8; i++ {
		res, body := p.postFormBody(p.client(), "/login", url.Values{"username": {"alice"}, "password": {"alice-password"}})
		if res.StatusCode != http.StatusForbidden || !strings.Contains(body, "Your account is disabled") {
			t.Fatalf("disabled user's login %d: %d, want 403 saying the account is disabled", i, res.StatusCode)
		}
	}
	if res := p.postForm(p.client(), "/login", url.Values{"username": {"bob-not-here"}, "password": {"wrong-password"}}); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("an unknown user after the disabled user's tries: %d, want 401", res.StatusCode)
	}
	carol, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "carol", Password: "carol-password"})
	if err != nil || carol == nil {
		t.Fatal(err)
	}
	p.login(p.client(), "carol", "carol-password")
	// A wrong password for her account reads like any other wrong password.
	if res, body := p.postFormBody(p.client(), "/login", url.Values{"username": {"alice"}, "password": {"not-her-password"}}); res.StatusCode != http.StatusUnauthorized || strings.Contains(body, "Your account is disabled") {
		t.Fatalf("a wrong password for a disabled account: %d (says disabled: %v), want the usual 401", res.StatusCode, strings.Contains(body, "Your account is disabled"))
	}
}

func TestNonAdminCannotReachAdmin(t *testing.T) {
	p := newPortal(t)
	p.srv.Store.CreateUser(context.Background(), models.NewUser{Username: "bob", Password: "bob-password1"})
	c := p.client()
	p.login(c, "bob", "bob-password1")
	if res, _ := p.get(c, "/admin/users"); res.StatusCode != http.StatusForbidden {
		t.Fatalf("/admin/users as user: %d", res.StatusCode)
	}
	if res := p.postForm(c, "/admin/users", url.Values{"username": {"mallory"}, "password": {"mallory-pass"}, "role": {"admin"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("create user as user: %d", res.StatusCode)
	}
	if _, err := p.srv.Store.UserByUsername(context.Background(), "mallory"); err == nil {
		t.Fatal("non-admin created a user")
	}
}

func TestSecurityHeaders(t *testing.T) {
	p := newPortal(t)
	res, _ := p.get(p.client(), "/login")
	csp := res.Header.Get("Content-Security-Policy")
	for _, want := range []string{"script-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP allows inline code: %q", csp)
	}
	if res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("Referrer-Policy") == "" {
		t.Errorf("missing nosniff/referrer policy: %v", res.Header)
	}
}

func TestHealthz(t *testing.T) {
	p := newPortal(t)
	res, body := p.get(p.client(), "/healthz")
	if res.StatusCode != 200 || !strings.Contains(body, `"ok"`) {
		t.Fatalf("healthz: %d %s", res.StatusCode, body)
	}
}

func TestStaticAssetsEmbedded(t *testing.T) {
	p := newPortal(t)
	for _, path := range []string{"/static/css/app.css", "/static/js/app.js", "/static/img/logo.svg"} {
		res, body := p.get(p.client(), path)
		if res.StatusCode != 200 || len(body) < 50 {
			t.Errorf("%s: %d, %d bytes", path, res.StatusCode, len(body))
		}
	}
}

func TestMetrics(t *testing.T) {
	p := newPortal(t)
	admin := p.client()
	p.login(admin, "admin", adminPassword) // the default: admins only (metrics_test.go)
	res, body := p.get(admin, "/metrics")
	if res.StatusCode != 200 {
		t.Fatalf("/metrics: %d", res.StatusCode)
	}
	for _, want := range []string{`workbench_gpus{model="NVIDIA H100 80GB HBM3",state="free"} 8`, "workbench_gpus_simulated 1", `workbench_workbenches{state="running"} 0`, "go_goroutines"} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// Colleagues behind one address (a lab's NAT): once someone there has
// guessed enough passwords to hold the address back, a colleague whose
// browser logged in before still logs in with the right password; a new
// browser waits, as the guesser's does. The browser's token is a cookie
// sent only to /login, out of scripts' reach, and it trusts that browser
// for its own user only.
func TestKnownBrowserLogsInPastItsAddressDelay(t *testing.T) {
	p := newPortal(t)
	tokenFor(t, p, "bob", "user")
	known := p.client()
	p.login(known, "bob", "bob-password")
	u, _ := url.Parse(p.ts.URL + "/login")
	var device *http.Cookie
	for _, ck := range known.Jar.Cookies(u) {
		if ck.Name == "wb_device" {
			device = ck
		}
	}
	if device == nil {
		t.Fatal("no device cookie after a login")
	}
	root, _ := url.Parse(p.ts.URL + "/gpus")
	for _, ck := range known.Jar.Cookies(root) {
		if ck.Name == "wb_device" {
			t.Fatal("the device cookie is sent beyond /login")
		}
	}
	// Someone at the same address guesses other accounts until it waits.
	guesser := p.client()
	for i := 0; ; i++ {
		res := p.postForm(guesser, "/login", url.Values{"username": {fmt.Sprintf("user%d", i)}, "password": {"guess-password-1"}})
		if res.StatusCode == http.StatusTooManyRequests {
			break
		}
		if res.StatusCode != http.StatusUnauthorized || i > 100 {
			t.Fatalf("guess %d: %d", i, res.StatusCode)
		}
	}
	fresh := p.client()
	if res := p.postForm(fresh, "/login", url.Values{"username": {"bob"}, "password": {"bob-password"}}); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a new browser at the held-back address: %d, want 429", res.StatusCode)
	}
	if res := p.postForm(known, "/login", url.Values{"username": {"bob"}, "password": {"bob-password"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("bob's known browser at the held-back address: %d, want 303", res.StatusCode)
	}
	// The token is bob's: with it, another account is held back as usual.
	if res := p.postForm(known, "/login", url.Values{"username": {"admin"}, "password": {adminPassword}}); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("bob's browser logging in as admin at the held-back address: %d, want 429", res.StatusCode)
	}
}
