package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestVisitingAFormAddressGoesToItsPage: a form that fails answers at the
// address it posted to (/workbenches, /admin/quotas/user/alice), which the
// browser keeps in its bar and history. Pressing Enter there, or picking it
// from the history, is a GET to a POST-only address: it leads to the page
// the form lives on, not to "405 method not allowed". Every POST-only page
// address of the route table is visited; /logout and the JSON API keep
// their 405.
func TestVisitingAFormAddressGoesToItsPage(t *testing.T) {
	p := newPortal(t)
	admin := p.client()
	p.login(admin, "admin", adminPassword)

	// The forms people fill most, each to its own page.
	for path, want := range map[string]string{
		"/workbenches":                          "/",
		"/workbenches/abc123/stop":              "/workbenches/abc123",
		"/workbenches/abc123/ports/8888/delete": "/workbenches/abc123",
		"/reservations":                         "/gpus",
		"/images/7/share":                       "/images/saved",
		"/settings/tokens/3/revoke":             "/settings/tokens",
		"/notifications/watches":                "/notifications",
		"/admin/quotas/user/alice":              "/admin/quotas",
		"/admin/users":                          "/admin/users", // has its own GET: a page, no redirect
		"/admin/images":                         "/catalog",
		"/admin/images/load":                    "/admin/registries",
		"/admin/price-tiers":                    "/admin/prices",
		"/admin/gpus/GPU-1/drain":               "/gpus",
		"/admin/calculator/apply-rate":          "/calculator",
		"/admin/billing/credit":                 "/admin/billing",
	} {
		res, body := p.get(admin, path)
		if path == want {
			if res.StatusCode != http.StatusOK {
				t.Errorf("GET %s: %d, want its page", path, res.StatusCode)
			}
			continue
		}
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != want {
			t.Errorf("GET %s: %d to %q, want 303 to %s: %.200s", path, res.StatusCode, res.Header.Get("Location"), want, body)
			continue
		}
		if res, _ := p.get(admin, want); res.StatusCode != http.StatusOK && !strings.Contains(want, "abc123") {
			t.Errorf("GET %s leads to %s, which answers %d", path, want, res.StatusCode)
		}
	}

	// Every POST-only page address leads to a page of the route table.
	routes := portalRoutes(t)
	param := regexp.MustCompile(`:[^/]*`)
	for _, r := range routes {
		if r.method != http.MethodPost || strings.HasPrefix(r.path, "/api/") || r.path == "/logout" || routeOf(routes, http.MethodGet, r.path) != "" {
			continue
		}
		path := param.ReplaceAllString(r.path, "p1")
		res, _ := p.get(admin, path)
		loc := res.Header.Get("Location")
		if res.StatusCode != http.StatusSeeOther || routeOf(routes, http.MethodGet, loc) == "" {
			t.Errorf("GET %s (a form's address): %d to %q, want 303 to a page", path, res.StatusCode, loc)
		}
	}

	// GET /logout must not look like it logged out; the API keeps its
	// JSON 405. The page says what the address is for, in Chinese too.
	zh, en := p.readersSignedIn("admin", adminPassword)
	res, body := p.get(en, "/logout")
	if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "POST" {
		t.Errorf("GET /logout: %d, Allow %q; want 405, Allow POST", res.StatusCode, res.Header.Get("Allow"))
	}
	if !strings.Contains(body, "not a visit; go back to the page and use its button") {
		t.Errorf("GET /logout does not say what the address is for: %.300s", body)
	}
	if _, body := p.get(zh, "/logout"); !strings.Contains(body, "不能直接访问") {
		t.Errorf("GET /logout in Chinese is not translated: %.400s", body)
	}
	token := tokenFor(t, p, "admin", "admin")
	status, hdr, body := p.rawRequest(http.DefaultClient, http.MethodGet, "/api/v1/workbenches/abc/stop", token, "", "")
	if status != http.StatusMethodNotAllowed || !strings.Contains(body, `"method_not_allowed"`) || hdr.Get("Allow") != "POST" ||
		!strings.Contains(body, "GET is not a method of this address; it takes POST") {
		t.Errorf("GET on a POST-only API address: %d, Allow %q: %.200s; want a JSON 405 naming the method it takes", status, hdr.Get("Allow"), body)
	}
	// A script's wrong method is told which ones the address takes (it
	// was told to use the page's button).
	status, _, body = p.rawRequest(http.DefaultClient, http.MethodDelete, "/api/v1/me", token, "", "")
	if status != http.StatusMethodNotAllowed || !strings.Contains(body, "DELETE is not a method of this address; it takes GET, PATCH") || strings.Contains(body, "button") {
		t.Errorf("DELETE /api/v1/me: %d %.200s, want a 405 naming GET, PATCH", status, body)
	}
}

// TestBrowserEnterOnAFailedFormsAddress: with JavaScript on and off, a
// person launches with a name the portal refuses, reads the error at
// /workbenches, then presses Enter in the address bar (a GET of the
// address shown) and lands on their workbench list, not on a 405.
func TestBrowserEnterOnAFailedFormsAddress(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) {
			p, b := btAdminIn(t, js)
			btNavigate(t, b, p.ts.URL+"/workbenches/new")
			btDo(t, b, "type a name", chromedp.SendKeys(chromedp.CSS(`[data-testid=launch-form] input[name=name]`), "bad name!!"))
			resp := btSubmit(t, b, "click Launch", chromedp.Click(chromedp.CSS(`[data-testid=launch-submit]`)))
			if resp.Status != http.StatusBadRequest {
				t.Fatalf("launch: status %d, want 400", resp.Status)
			}
			shown := btLocation(t, b)
			if shown.Path != "/workbenches" {
				t.Fatalf("the failed launch shows %s, want /workbenches", shown)
			}
			resp = btNavigate(t, b, shown.String())
			if loc := btLocation(t, b); resp.Status != http.StatusOK || loc.Path != "/" {
				t.Fatalf("Enter on %s: status %d at %s, want the workbench list at /", shown.Path, resp.Status, loc)
			}
			btDo(t, b, "see the list", chromedp.WaitVisible(chromedp.CSS(`a[href="/workbenches/new"]`)))
		})
	}
}

// TestSignInAfterAnExpiredSessionLeadsToTheFormsPage: a form posted after
// the session ended sends the person to sign in with the form's address as
// next; signing in then visits that address, which leads to the form's
// page (it was a 405).
func TestSignInAfterAnExpiredSessionLeadsToTheFormsPage(t *testing.T) {
	p := newPortal(t)
	c := p.client()
	res := p.postForm(c, "/notifications/watches", url.Values{"gpu_model": {"NVIDIA H100 80GB HBM3"}})
	loc, err := res.Location()
	if res.StatusCode != http.StatusSeeOther || err != nil || loc.Path != "/login" || loc.Query().Get("next") != "/notifications/watches" {
		t.Fatalf("a form posted without a session: %d to %v, want the sign-in page with next=/notifications/watches", res.StatusCode, loc)
	}
	res = p.postForm(c, "/login", url.Values{"username": {"admin"}, "password": {adminPassword}, "next": {"/notifications/watches"}})
	if got := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || got != "/notifications/watches" {
		t.Fatalf("sign in: %d to %q, want 303 to the form's address", res.StatusCode, got)
	}
	res, _ = p.get(c, "/notifications/watches")
	if got := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || got != "/notifications" {
		t.Fatalf("visiting the form's address after signing in: %d to %q, want 303 to /notifications", res.StatusCode, got)
	}
	if res, _ := p.get(c, "/notifications"); res.StatusCode != http.StatusOK {
		t.Fatalf("/notifications: %d", res.StatusCode)
	}
}

// TestHeadOfAPageIsItsGet: HEAD of a page answers as its GET without a
// body (an uptime monitor's HEAD /healthz was a 405, then a redirect to /
// that HEAD / repeated); HEAD of a form's address goes to its page as a
// visit does.
func TestHeadOfAPageIsItsGet(t *testing.T) {
	p := newPortal(t)
	c := p.client()
	head := func(path string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodHead, p.ts.URL+path, nil)
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	if res := head("/healthz"); res.StatusCode != http.StatusOK || res.ContentLength > 0 && res.Header.Get("Content-Length") == "" {
		t.Errorf("HEAD /healthz: %d, want 200", res.StatusCode)
	}
	if res := head("/static/css/app.css"); res.StatusCode != http.StatusOK {
		t.Errorf("HEAD a static file: %d, want 200", res.StatusCode)
	}
	if res := head("/"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/login") {
		t.Errorf("HEAD / signed out: %d to %q, want the sign-in page", res.StatusCode, res.Header.Get("Location"))
	}
	p.login(c, "admin", adminPassword)
	if res := head("/gpus"); res.StatusCode != http.StatusOK {
		t.Errorf("HEAD /gpus signed in: %d, want 200", res.StatusCode)
	}
	if res := head("/workbenches"); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
		t.Errorf("HEAD of a form's address: %d to %q, want 303 to its page", res.StatusCode, res.Header.Get("Location"))
	}
}
