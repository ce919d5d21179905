package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"workbench/models"
)

// What each action reachable from a workbench whose stop is carried out
// but not recorded (the database's disk full; read-only here, as
// TestStopNotRecordedIsShownStopped makes it) tells its owner, through
// the page's forms. Before: the home reset page said "Stop nb first" of a
// workbench its page shows stopped; Start, Delete, Save as image, Restart
// with GPUs and Add port (from a page loaded before the stop, or the port
// form still shown) came back to the page without a word, since their
// refusal went into a flash the session (in the database) could not keep;
// a second Stop got an error page saying it "may still show as running".
// Now each says why at once, the reset waits for the record (it never runs
// under a record that says running), and once the disk is writable the
// reset records the stop first and goes on.
func TestStopNotRecordedActionsSayWhy(t *testing.T) {
	t.Parallel()
	var admin *http.Client
	u := unwritableWithRunningWorkbench(t, func(p *testPortal) {
		admin = p.client()
		p.loginSudo(admin, "admin", adminPassword)
	})
	p, token, alice, browser, wb, ctx := u.p, u.token, u.alice, u.browser, u.wb, context.Background()
	// Her Stop, from the page: carried out, not recorded; back to the
	// page, which says so (not an error page).
	if res := p.postForm(browser, "/workbenches/"+wb.ID+"/stop", nil); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/workbenches/"+wb.ID {
		t.Errorf("stop from the page with the database unwritable: %d to %q, want 303 to its page", res.StatusCode, res.Header.Get("Location"))
	}
	if _, page := p.get(browser, "/workbenches/"+wb.ID); !strings.Contains(page, `data-testid="wb-stop-not-recorded-notice"`) ||
		!strings.Contains(page, `href="/settings/home" data-testid="home-settings"`) {
		t.Fatalf("its page does not say the stop is not recorded, or links no home settings")
	}
	// A second Stop (a page loaded before): the same.
	if res := p.postForm(browser, "/workbenches/"+wb.ID+"/stop", nil); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/workbenches/"+wb.ID {
		t.Errorf("a second stop: %d to %q, want 303 to its page", res.StatusCode, res.Header.Get("Location"))
	}

	// "reset home volume…": it waits for the record, and says so.
	for who, c := range map[string]*http.Client{"alice": browser, "admin": admin} {
		path := "/settings/home"
		if who == "admin" {
			path = "/admin/users/" + itoa(alice.ID) + "/home"
		}
		res, page := p.get(c, path)
		doc := parseHTML(t, page)
		note := doc.Find(`[data-testid=home-reset-not-recorded]`).Text()
		if res.StatusCode != http.StatusOK || !strings.Contains(note, "nb is stopped, but its stop is not recorded yet") || !strings.Contains(note, "which happens by itself") {
			t.Errorf("%s's home reset page: %d, note %q", who, res.StatusCode, note)
		}
		if busy := doc.Find(`[data-testid=home-reset-busy]`).Text(); busy != "" {
			t.Errorf("%s's home reset page says %q of a workbench shown stopped", who, busy)
		}
		if doc.Find(`[data-testid=home-reset-submit]`).Length() != 0 {
			t.Errorf("%s's home reset page offers the reset while the stop is not recorded", who)
		}
	}
	// Its form posted all the same (a page loaded before the stop): refused,
	// the page again with its note.
	res, page := p.postFormBody(browser, "/settings/home/reset", url.Values{"confirm": {"alice"}})
	if doc := parseHTML(t, page); res.StatusCode != http.StatusServiceUnavailable || doc.Find(`[data-testid=home-reset-not-recorded]`).Length() != 1 {
		t.Errorf("reset with the stop not recorded: %d, want 503 and the page's note\n%.400s", res.StatusCode, doc.Find("main").Text())
	}

	// The workbench's own forms, from a page loaded before the stop.
	const unavailable = http.StatusServiceUnavailable
	for _, a := range []struct {
		path   string
		form   url.Values
		status int
		want   string
	}{
		{"/start", url.Values{"queue": {"on"}}, unavailable, "Could not start: its stop is carried out but not recorded yet"},
		{"/start", url.Values{"mode": {"cpu"}}, unavailable, "Could not start: its stop is carried out but not recorded yet"},
		{"/delete", url.Values{"confirmed": {"true"}}, unavailable, "Could not delete: its stop is carried out but not recorded yet"},
		{"/delete", url.Values{"delete_data": {"true"}, "data_confirmed": {"true"}, "confirmed": {"true"}}, unavailable, "Could not delete: its stop is carried out but not recorded yet"},
		{"/save-image", url.Values{"name": {"snap"}, "running_ok": {"true"}}, unavailable, "Could not save as image: its stop is carried out but not recorded yet"},
		{"/restart-gpus", url.Values{"confirmed": {"true"}}, unavailable, "Could not restart with GPUs: its stop is carried out but not recorded yet"},
		{"/ports", url.Values{"port": {"6006"}}, unavailable, "Could not change the ports: the portal cannot save changes right now"},
		// Stopped, as its page shows it: nothing to extend.
		{"/extend", nil, http.StatusConflict, "only a running workbench can be extended"},
	} {
		res, page := p.postFormBody(browser, "/workbenches/"+wb.ID+a.path, a.form)
		msg := strings.Join(strings.Fields(parseHTML(t, page).Find(`[data-testid=error]`).Text()), " ")
		if res.StatusCode != a.status || !strings.Contains(msg, a.want) {
			t.Errorf("POST %s %s: %d, %q; want %d saying %q", a.path, a.form.Encode(), res.StatusCode, msg, a.status, a.want)
		}
	}
	// A script is told the same, with the stop's code.
	if status, body := p.api(http.MethodPost, "/api/v1/workbenches/"+wb.ID+"/start", token, ""); status != http.StatusServiceUnavailable || errCode(body) != "stop_not_recorded" {
		t.Errorf("API start: %d %v, want 503 stop_not_recorded", status, body)
	}
	if rec, err := p.srv.Store.WorkbenchByID(ctx, wb.ID); err != nil || rec.State != models.StateRunning {
		t.Fatalf("the record meanwhile: %v %v; want still running (nothing could be written)", rec, err)
	}

	// The disk is freed. Before any reconciliation, the reset (the page
	// still showing its note) records the stop first, then resets.
	if err := p.srv.Store.QueryOnly(ctx, false); err != nil {
		t.Fatal(err)
	}
	if res := p.postForm(browser, "/settings/home/reset", url.Values{"confirm": {"alice"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("reset once the disk is writable: %d, want 303", res.StatusCode)
	}
	rec, err := p.srv.Store.WorkbenchByID(ctx, wb.ID)
	if err != nil || rec.State != models.StateStopped || rec.Reason != "" {
		t.Errorf("after the reset the record is %v %v; want stopped by its owner", rec, err)
	}
	if entries, _ := p.srv.Store.ListAudit(ctx, 20); !auditHas(entries, "home.reset") {
		t.Error("the reset is not audited")
	}
}
