package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"workbench/models"
)

// A stop carried out while the database cannot be written (its disk full
// or read-only) stops the container, but the record says running until
// reconciliation can write. The page and the API said "running" (with Open
// and Stop) for a workbench that was not; they now say stopped, not
// recorded yet, with no buttons (nothing can be saved). Once the disk is
// fixed, the stop is recorded as the owner's (no "the container
// disappeared").
func TestStopNotRecordedIsShownStopped(t *testing.T) {
	t.Parallel()
	u := unwritableWithRunningWorkbench(t)
	p, token, browser, wb, ctx := u.p, u.token, u.browser, u.wb, context.Background()
	if status, body := p.api(http.MethodPost, "/api/v1/workbenches/"+wb.ID+"/stop", token, ""); status != http.StatusServiceUnavailable || errCode(body) != "stop_not_recorded" {
		t.Fatalf("stop with the database unwritable: %d %v, want 503 stop_not_recorded", status, body)
	}
	status, got := p.api(http.MethodGet, "/api/v1/workbenches/"+wb.ID, token, "")
	if status != http.StatusOK || got["state"] != models.StateStopped || got["stop_not_recorded"] != true || got["stopped_at"] == nil || got["rate_per_hour_micros"] != float64(0) {
		t.Errorf("the workbench after its unrecorded stop: %d %v; want stopped, stop_not_recorded, stopped_at, no rate", status, got)
	}
	res, page := p.get(browser, "/workbenches/"+wb.ID)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("its page: %d\n%.600s", res.StatusCode, page)
	}
	for _, want := range []string{`data-state="stopped"`, `data-testid="wb-stop-not-recorded-notice"`, "not recorded yet", `data-stop-not-recorded="true"`} {
		if !strings.Contains(page, want) {
			t.Errorf("its page lacks %s", want)
		}
	}
	for _, button := range []string{`data-testid="stop"`, `data-testid="open-jupyter"`, `data-testid="start"`, `data-testid="delete"`, `data-testid="save-image"`} {
		if strings.Contains(page, button) {
			t.Errorf("its page offers %s while the stop is not recorded", button)
		}
	}

	if err := p.srv.Store.QueryOnly(ctx, false); err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Manager.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	rec, err := p.srv.Store.WorkbenchByID(ctx, wb.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.State != models.StateStopped || rec.Reason != "" {
		t.Errorf("recorded: state %s, reason %q; want stopped by its owner", rec.State, rec.Reason)
	}
	if _, got := p.api(http.MethodGet, "/api/v1/workbenches/"+wb.ID, token, ""); got["state"] != models.StateStopped || got["stop_not_recorded"] != nil {
		t.Errorf("the workbench once recorded: %v", got)
	}
	if _, page := p.get(browser, "/workbenches/"+wb.ID); strings.Contains(page, "wb-stop-not-recorded-notice") || !strings.Contains(page, `data-testid="start"`) ||
		!strings.Contains(page, `data-testid="save-image"`) {
		t.Errorf("its page once recorded still says not recorded, or offers no start or no Save as image")
	}
}

// unwritable is a portal where alice (signed in on browser, with an API
// token) has a running workbench wb, named "nb", and whose database has
// just become unwritable (read-only, as on a full disk; writable again
// when the test ends).
type unwritable struct {
	p       *testPortal
	token   string
	alice   *models.User
	browser *http.Client
	wb      *models.Workbench
}

// unwritableWithRunningWorkbench makes an unwritable portal; before runs
// while the database can still be written (another sign-in).
func unwritableWithRunningWorkbench(t *testing.T, before ...func(p *testPortal)) unwritable {
	t.Helper()
	u := unwritable{p: newPortal(t)}
	ctx := context.Background()
	u.token = tokenFor(t, u.p, "alice", "user")
	var err error
	if u.alice, err = u.p.srv.Store.UserByUsername(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	u.browser = u.p.client()
	u.p.login(u.browser, "alice", "alice-password")
	for _, f := range before {
		f(u.p)
	}
	u.wb = u.p.runningRecord(u.alice, "nb", models.GPUNeed{})
	if err := u.p.srv.Store.QueryOnly(ctx, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = u.p.srv.Store.QueryOnly(context.Background(), false) })
	return u
}
