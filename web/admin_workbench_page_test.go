package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
	"workbench/web"
)

// awpToken is bob's notebook token in these tests: long enough to be one
// of the portal's, and printed by his start script as docker-stacks does.
const awpToken = "nbtok0123456789abcdef0123456789ab"

// An administrator opens bob's workbench page from the row of
// /admin/workbenches (it was a 404 to them as to anyone). The page says
// whose it is and that it is read as an administrator, shows its state,
// facts and log, and nothing that enters the notebook: no Open link, no
// token (taken out of the log too), no port button, no SSH command, no
// owner's action; its one action is the admin console's Stop, which
// returns to the page. Bob's own page still has all of that, and another
// user gets the portal's 404 for it, as for an id that does not exist.
func TestAdminViewsUsersWorkbenchPage(t *testing.T) {
	p := newPortal(t, func(c *web.Config) { c.SSHAddr = "127.0.0.1:2222" })
	ctx := context.Background()
	tokenFor(t, p, "bob", "user")
	tokenFor(t, p, "carol", "user")
	bob, _ := p.srv.Store.UserByUsername(ctx, "bob")
	img, err := p.srv.Store.ImageByID(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	img.ExtraPorts = []int{6006}
	if err := p.srv.Store.UpdateImage(ctx, img); err != nil {
		t.Fatal(err)
	}
	wb := p.runningRecord(bob, "thesis", models.GPUNeed{})
	if err := p.srv.Store.SetWorkbenchState(ctx, wb.ID, models.StateRunning, 100, "", map[string]any{"token": awpToken,
		"exit_logs": "Executing the command: jupyter lab --IdentityProvider.token=" + awpToken + "\nopen http://127.0.0.1:8888/lab?token=" + awpToken + "\n"}); err != nil {
		t.Fatal(err)
	}

	// Bob's own page: the notebook's ways in are there (what the
	// administrator's must not have).
	bc := p.client()
	p.login(bc, "bob", "bob-password")
	res, body := p.get(bc, "/workbenches/"+wb.ID)
	own := mpDoc(t, body)
	if res.StatusCode != http.StatusOK || own.Find(`[data-testid=open-jupyter]`).Length() != 1 || own.Find(`[data-testid=ssh-command]`).Length() != 1 ||
		own.Find(`[data-testid=port-button]`).Length() != 1 || own.Find(`[data-testid=admin-view-banner]`).Length() != 0 {
		t.Fatalf("bob's own page: %d, open %d, ssh %d, port %d, admin banner %d", res.StatusCode, own.Find(`[data-testid=open-jupyter]`).Length(),
			own.Find(`[data-testid=ssh-command]`).Length(), own.Find(`[data-testid=port-button]`).Length(), own.Find(`[data-testid=admin-view-banner]`).Length())
	}

	// The admin's list links the row to the page.
	ac := p.client()
	p.loginSudo(ac, "admin", adminPassword)
	_, body = p.get(ac, "/admin/workbenches")
	link := mpDoc(t, body).Find(`[data-testid=workbench-row][data-id="` + wb.ID + `"] a[data-testid=wb-admin-view]`)
	if href, _ := link.Attr("href"); link.Length() != 1 || href != "/workbenches/"+wb.ID {
		t.Fatalf("bob's row links %d times to %q, want once to /workbenches/%s", link.Length(), href, wb.ID)
	}

	res, body = p.get(ac, "/workbenches/"+wb.ID)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("admin opens bob's workbench page: %d", res.StatusCode)
	}
	doc := mpDoc(t, body)
	banner := doc.Find(`[data-testid=admin-view-banner]`)
	if got := strings.TrimSpace(banner.Find(`[data-testid=admin-view-owner]`).Text()); got != "bob's workbench" || !strings.Contains(banner.Text(), "as an administrator") {
		t.Errorf("the banner reads %q", strings.Join(strings.Fields(banner.Text()), " "))
	}
	if got := strings.TrimSpace(doc.Find(`h1[data-testid=wb-name]`).Text()); got != "thesis" {
		t.Errorf("heading %q", got)
	}
	if got := doc.Find(`[data-testid=wb-state]`).First().Text(); got != "running" {
		t.Errorf("state %q", got)
	}
	if doc.Find(`[data-testid=wb-cost]`).Length() != 1 || doc.Find(`[data-testid=wb-gpus-label]`).Length() != 1 || doc.Find(`[data-testid=wb-history]`).Length() != 1 {
		t.Errorf("the page lacks cost, GPUs or history")
	}
	if logs := doc.Find(`[data-testid=wb-logs]`).Text(); !strings.Contains(logs, "Executing the command: jupyter lab") {
		t.Errorf("the log is not shown: %q", logs)
	}
	if strings.Contains(body, awpToken) {
		t.Errorf("the notebook token is on the administrator's page")
	}
	for _, id := range []string{"open-jupyter", "open-row", "ssh-command", "port-button", "follow-logs", "start", "delete", "delete-form",
		"extend", "save-image", "user-ports", "restart-gpus", "stop", "home-settings", "budget-banner"} {
		if n := doc.Find(`[data-testid="` + id + `"]`).Length(); n != 0 {
			t.Errorf("the administrator's page has %d [data-testid=%s]", n, id)
		}
	}
	doc.Find(`a[href]`).Each(func(_ int, a *goquery.Selection) {
		if href, _ := a.Attr("href"); strings.HasPrefix(href, "/wb/") || strings.Contains(href, "/api/v1/workbenches/") {
			t.Errorf("a link into the workbench: %s", href)
		}
	})
	doc.Find(`form`).Each(func(_ int, f *goquery.Selection) {
		if action, _ := f.Attr("action"); strings.HasPrefix(action, "/workbenches/") {
			t.Errorf("an owner's action on the administrator's page: %s", action)
		}
	})
	if doc.Find(`[data-testid=admin-force-stop]`).Length() != 0 {
		t.Errorf("a force stop is offered where no stop failed")
	}
	stop := doc.Find(`[data-testid=admin-stop]`)
	form := stop.Closest("form")
	if action, _ := form.Attr("action"); stop.Length() != 1 || action != "/admin/workbenches/"+wb.ID+"/stop" {
		t.Fatalf("%d Stop buttons, posting to %q", stop.Length(), action)
	}

	// Another user: the portal's 404 page, the same as for no workbench.
	cc := p.client()
	p.login(cc, "carol", "carol-password")
	res, body = p.get(cc, "/workbenches/"+wb.ID)
	_, none := p.get(cc, "/workbenches/nosuchworkbench")
	if res.StatusCode != http.StatusNotFound || strings.Contains(body, "thesis") || strings.Contains(body, "bob") ||
		strings.ReplaceAll(body, wb.ID, "nosuchworkbench") != none {
		t.Errorf("carol opens bob's workbench page: %d, not the page of an unknown id", res.StatusCode)
	}

	// The administrator's Stop, sent as the page's form sends it, stops
	// it and comes back to the page.
	fields := url.Values{}
	form.Find(`input[type=hidden]`).Each(func(_ int, in *goquery.Selection) { fields.Set(in.AttrOr("name", ""), in.AttrOr("value", "")) })
	fields.Set("confirmed", "true") // the page's script adds it when the question is answered
	res = p.postForm(ac, "/admin/workbenches/"+wb.ID+"/stop", fields)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/workbenches/"+wb.ID {
		t.Fatalf("stop from the page: %d to %q, want back to the page", res.StatusCode, res.Header.Get("Location"))
	}
	got, err := p.srv.Store.WorkbenchByID(ctx, wb.ID)
	if err != nil || got.State != models.StateStopped || got.Reason != "stopped by an administrator (admin)" {
		t.Fatalf("after the stop: %+v %v", got, err)
	}
	_, body = p.get(ac, "/workbenches/"+wb.ID)
	doc = mpDoc(t, body)
	if flash := doc.Find(`[data-testid=flash]`).Text(); !strings.Contains(flash, "Workbench thesis stopped.") {
		t.Errorf("flash %q", flash)
	}
	if doc.Find(`[data-testid=admin-stop]`).Length() != 0 || doc.Find(`[data-testid=start]`).Length() != 0 {
		t.Errorf("the stopped workbench's page offers Stop or Start to the administrator")
	}
	// back is followed to that page only.
	res = p.postForm(ac, "/admin/workbenches/"+wb.ID+"/stop", url.Values{"back": {"//evil.example/"}, "confirmed": {"true"}})
	if res.Header.Get("Location") != "/admin/workbenches" {
		t.Errorf("back=//evil.example/ went to %q", res.Header.Get("Location"))
	}
}

// Where a stop failed, the administrator's view of the page says so and
// offers the console's Force stop, which kills it and comes back.
func TestAdminForceStopsFromUsersWorkbenchPage(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "bob", "user")
	bob, _ := p.srv.Store.UserByUsername(ctx, "bob")
	wb := p.runningRecord(bob, "stuck", models.GPUNeed{})
	if err := p.srv.Store.SetWorkbenchState(ctx, wb.ID, models.StateStopping, 0, "",
		map[string]any{"stop_error": "could not stop the container: engine timed out"}); err != nil {
		t.Fatal(err)
	}
	ac := p.client()
	p.loginSudo(ac, "admin", adminPassword)
	_, body := p.get(ac, "/workbenches/"+wb.ID)
	doc := mpDoc(t, body)
	force := doc.Find(`[data-testid=stop-error] [data-testid=admin-force-stop]`)
	form := force.Closest("form")
	if action, _ := form.Attr("action"); force.Length() != 1 || action != "/admin/workbenches/"+wb.ID+"/stop" || form.Find(`input[name=force]`).AttrOr("value", "") != "true" {
		t.Fatalf("%d force stops posting to %q", force.Length(), action)
	}
	if doc.Find(`[data-testid=force-stop-own]`).Length() != 0 || doc.Find(`[data-testid=retry-stop]`).Length() != 0 {
		t.Errorf("the owner's stop buttons are on the administrator's page")
	}
	fields := url.Values{}
	form.Find(`input[type=hidden]`).Each(func(_ int, in *goquery.Selection) { fields.Set(in.AttrOr("name", ""), in.AttrOr("value", "")) })
	fields.Set("confirmed", "true")
	res := p.postForm(ac, "/admin/workbenches/"+wb.ID+"/stop", fields)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/workbenches/"+wb.ID {
		t.Fatalf("force stop from the page: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	entries, err := p.srv.Store.ListAudit(ctx, 50)
	if err != nil {
		t.Fatal(err)
	}
	forced := 0
	for _, e := range entries {
		if e.Target == wb.ID && e.Action == "workbench.force_stop" {
			forced++
		}
	}
	if got, _ := p.srv.Store.WorkbenchByID(ctx, wb.ID); got == nil || got.State != models.StateStopped || forced != 1 {
		t.Fatalf("after the force stop: %+v, %d force_stop audit rows", got, forced)
	}
}

// On the real engine: bob's workbench runs in its container; the
// administrator reads its page (its live log, without its notebook token)
// and stops it with the page's Stop: the container is gone, the stop is
// audited as workbench.admin_stop and bob is told.
func TestAdminStopsRunningWorkbenchFromItsPage(t *testing.T) {
	p, _ := enginePortal(t)
	ctx := context.Background()
	bob := tokenFor(t, p, "bob", "user")
	code, out := p.api("POST", "/api/v1/workbenches", bob, `{"name":"long","image":"fake","flavor":"1x H100 80GB HBM3"}`)
	if code != http.StatusAccepted {
		t.Fatalf("launch: %d %v", code, out)
	}
	id := out["id"].(string)
	waitState(t, p, bob, id, "running")
	rec, err := p.srv.Store.WorkbenchByID(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	ac := p.client()
	p.loginSudo(ac, "admin", adminPassword)
	res, body := p.get(ac, "/workbenches/"+id)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("admin opens bob's page: %d", res.StatusCode)
	}
	doc := mpDoc(t, body)
	if strings.Contains(body, rec.Token) || doc.Find(`[data-testid=open-jupyter]`).Length() != 0 {
		t.Errorf("the notebook's token or Open link is on the administrator's page")
	}
	if logs := doc.Find(`[data-testid=wb-logs]`).Text(); !strings.Contains(logs, "Fake JupyterLab listening") {
		t.Errorf("the container's log is not on the page: %q", logs)
	}
	form := doc.Find(`[data-testid=admin-stop]`).Closest("form")
	fields := url.Values{}
	form.Find(`input[type=hidden]`).Each(func(_ int, in *goquery.Selection) { fields.Set(in.AttrOr("name", ""), in.AttrOr("value", "")) })
	action, _ := form.Attr("action")
	fields.Set("confirmed", "true") // the page's script adds it when the question is answered
	if res := p.postForm(ac, action, fields); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/workbenches/"+id {
		t.Fatalf("stop from the page (%q): %d to %q", action, res.StatusCode, res.Header.Get("Location"))
	}
	if got := waitState(t, p, bob, id, "stopped"); got["reason"] != "stopped by an administrator (admin)" {
		t.Errorf("reason %v", got["reason"])
	}
	_, notes := p.api("GET", "/api/v1/notifications", bob, "")
	if items, _ := notes["items"].([]any); len(items) != 1 {
		t.Errorf("bob's notifications: %v", notes)
	}
	entries, err := p.srv.Store.ListAudit(ctx, 50)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if e.Target == id && e.Action == "workbench.admin_stop" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d workbench.admin_stop audit rows, want 1", n)
	}
}
