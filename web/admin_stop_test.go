package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
	"workbench/web"
)

// On the real engine: an administrator stops a user's running workbench
// through the API; it is stopped with the administrator named in its
// reason, audited, and its owner, who did not ask for it, is told.
func TestAdminStopTellsTheOwner(t *testing.T) {
	p, _ := enginePortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	alice := tokenFor(t, p, "alice", "user")
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"long","image":"fake","flavor":"1x H100 80GB HBM3"}`)
	if code != http.StatusAccepted {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, p, alice, id, "running")
	// An admin reads anyone's workbench by id (it is in ?all=true), and
	// nothing more of it: its logs stay its owner's, as its notebook does.
	if code, got := p.api("GET", "/api/v1/workbenches/"+id, admin, ""); code != 200 || got["owner"] != "alice" || got["state"] != "running" {
		t.Fatalf("admin reads alice's workbench: %d %v", code, got)
	}
	if code, _ := p.apiBytes("GET", "/api/v1/workbenches/"+id+"/logs", admin, ""); code != http.StatusNotFound {
		t.Fatalf("admin reads alice's logs: %d, want 404", code)
	}
	if code, _ := p.api("GET", "/api/v1/workbenches/"+id, tokenFor(t, p, "bob", "user"), ""); code != http.StatusNotFound {
		t.Fatalf("bob reads alice's workbench: %d, want 404", code)
	}
	if code, out := p.api("POST", "/api/v1/admin/workbenches/"+id+"/stop", alice, ""); code != http.StatusForbidden {
		t.Fatalf("a user used the admin stop: %d %v", code, out)
	}
	if code, out := p.api("POST", "/api/v1/admin/workbenches/"+id+"/stop", admin, ""); code != http.StatusOK || out["id"] != id || out["state"] != "stopped" {
		t.Fatalf("admin stop: %d %v", code, out)
	}
	got := waitState(t, p, alice, id, "stopped")
	if got["reason"] != "stopped by an administrator (admin)" {
		t.Fatalf("reason %v", got["reason"])
	}
	_, notes := p.api("GET", "/api/v1/notifications", alice, "")
	items, _ := notes["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["message"] != "Workbench long: stopped by an administrator (admin)" {
		t.Fatalf("alice's notifications: %v", notes)
	}
	// A second stop of the stopped workbench does nothing, and the audit
	// log does not claim it did.
	if code, out := p.api("POST", "/api/v1/admin/workbenches/"+id+"/stop", admin, ""); code != http.StatusOK || out["state"] != "stopped" {
		t.Fatalf("second admin stop: %d %v", code, out)
	}
	entries, err := p.srv.Store.ListAudit(context.Background(), 50)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if e.Action == "workbench.admin_stop" && e.Target == id {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d workbench.admin_stop audit rows for one stop and one no-op, want 1", n)
	}
}

// The admin's button on /admin/workbenches says what it does: a stop like
// the owner's, with the grace period (it read "Force stop", asked
// "Force-stop this workbench?" and was audited as workbench.force_stop,
// though nothing was forced). Its confirmation says the owner is told,
// and the audit names it an administrator's stop.
func TestAdminStopIsCalledAStop(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "alice", "user")
	alice, _ := p.srv.Store.UserByUsername(ctx, "alice")
	wb := p.runningRecord(alice, "long", models.GPUNeed{})
	c := p.client()
	p.loginSudo(c, "admin", adminPassword)
	_, page := p.get(c, "/admin/workbenches")
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	btn := doc.Find(`[data-testid=admin-stop]`)
	form := btn.Closest("form")
	if action, _ := form.Attr("action"); btn.Length() != 1 || action != "/admin/workbenches/"+wb.ID+"/stop" {
		t.Fatalf("%d stop buttons, form to %q; want one for %s", btn.Length(), action, wb.ID)
	}
	if got := strings.TrimSpace(btn.Text()); got != "Stop" {
		t.Errorf("the admin's button reads %q, want Stop", got)
	}
	if got, _ := form.Attr("data-confirm"); got != "Stop this workbench? Its owner is told." {
		t.Errorf("its confirmation asks %q", got)
	}
	if n := doc.Find(`[data-testid=force-stop]`).Length(); n != 0 || strings.Contains(doc.Find(".row-actions").Text(), "Force") {
		t.Errorf("the list still offers a force stop (%d)", n)
	}
	// Without JavaScript the form comes without the page's yes: the
	// portal asks, and nothing stops until it is answered.
	res, body := p.postFormBody(c, "/admin/workbenches/"+wb.ID+"/stop", url.Values{})
	if still, err := p.srv.Store.WorkbenchByID(ctx, wb.ID); res.StatusCode != http.StatusOK || !strings.Contains(body, "Stop this workbench? Its owner is told.") ||
		err != nil || still.State == models.StateStopped {
		t.Fatalf("stop without the page's yes: %d (question asked: %v), state %s", res.StatusCode, strings.Contains(body, "Stop this workbench?"), still.State)
	}
	if res := p.postForm(c, "/admin/workbenches/"+wb.ID+"/stop", url.Values{"confirmed": {"true"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("stop: %d", res.StatusCode)
	}
	got, err := p.srv.Store.WorkbenchByID(ctx, wb.ID)
	if err != nil || got.State != models.StateStopped || got.Reason != "stopped by an administrator (admin)" {
		t.Fatalf("after the admin's stop: %+v %v", got, err)
	}
	entries, err := p.srv.Store.ListAudit(ctx, 50)
	if err != nil {
		t.Fatal(err)
	}
	actions := map[string]int{}
	for _, e := range entries {
		if e.Target == wb.ID {
			actions[e.Action]++
		}
	}
	if actions["workbench.admin_stop"] != 1 || actions["workbench.force_stop"] != 0 {
		t.Errorf("audit rows for the stop: %v, want one workbench.admin_stop", actions)
	}
}

// On the real engine, with a Jupyter that takes 2 s to shut down: the
// admin's Stop is the graceful stop (the container exits by itself, code
// 0); where a stop failed, the row offers a real Force stop, which kills
// the container (137) and is audited as workbench.force_stop. Both tell
// the owner. Reconciliation is pushed out of the way so the admin's clicks
// are what finishes each stop.
func TestAdminForceStopOnlyWhereTheStopFailed(t *testing.T) {
	r := newLCRig(t, func(c *web.Config) { c.Workbenches.ReconcileEvery = time.Hour })
	ctx := context.Background()
	graceful := r.launchAPI(t, "graceful", lcSlowImage)
	stuck := r.launchAPI(t, "stuck", lcSlowImage)
	if err := r.p.srv.Store.SetWorkbenchState(ctx, stuck, models.StateStopping, 0, "",
		map[string]any{"stop_error": "could not stop the container: engine timed out"}); err != nil {
		t.Fatal(err)
	}
	c := r.p.client()
	r.p.loginSudo(c, "admin", adminPassword)
	_, page := r.p.get(c, "/admin/workbenches")
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	row := func(id string) *goquery.Selection {
		return doc.Find(`[data-testid=workbench-row][data-id="` + id + `"]`)
	}
	if n := row(graceful).Find(`[data-testid=admin-force-stop]`).Length(); n != 0 || row(graceful).Find(`[data-testid=admin-stop]`).Length() != 1 {
		t.Errorf("a running workbench's row: %d force stops, want only Stop", n)
	}
	force := row(stuck).Find(`[data-testid=admin-force-stop]`)
	form := force.Closest("form")
	if v, _ := form.Find(`input[name=force]`).Attr("value"); force.Length() != 1 || v != "true" {
		t.Fatalf("the failed stop's row: %d force stops sending force=%q, want one sending true", force.Length(), v)
	}
	if got, _ := form.Attr("data-confirm"); !strings.Contains(got, "Kill the container now") {
		t.Errorf("the force stop asks %q", got)
	}

	for _, tc := range []struct {
		id       string
		form     url.Values
		exitCode int
		action   string
	}{{graceful, url.Values{"confirmed": {"true"}}, 0, "workbench.admin_stop"}, {stuck, url.Values{"force": {"true"}, "confirmed": {"true"}}, 137, "workbench.force_stop"}} {
		if res := r.p.postForm(c, "/admin/workbenches/"+tc.id+"/stop", tc.form); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("%s: stop %d", tc.id, res.StatusCode)
		}
		r.assertStopped(t, tc.id)
		info, err := r.cli.ContainerInspect(ctx, "wb-"+r.installID+"-"+tc.id)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.ExitCode != tc.exitCode {
			t.Errorf("%s: container exit code %d, want %d", tc.action, info.State.ExitCode, tc.exitCode)
		}
		entries, err := r.p.srv.Store.ListAudit(ctx, 50)
		if err != nil {
			t.Fatal(err)
		}
		var actions []string
		for _, e := range entries {
			if e.Target == tc.id && strings.HasPrefix(e.Action, "workbench.") && strings.HasSuffix(e.Action, "_stop") {
				actions = append(actions, e.Action)
			}
		}
		if len(actions) != 1 || actions[0] != tc.action {
			t.Errorf("%s: audited %v, want %s", tc.id, actions, tc.action)
		}
	}
	_, notes := r.p.api("GET", "/api/v1/notifications", r.token, "")
	items, _ := notes["items"].([]any)
	if len(items) != 2 {
		t.Errorf("alice was told %d times of two admin stops: %v", len(items), notes)
	}
}
