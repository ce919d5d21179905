package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// lin's stopped workbench cannot start: every GPU is held. Clicking Start
// with "if it cannot start now, wait in the queue" left checked (the default) puts
// it in the queue — the page says queued and offers Leave the queue —
// instead of refusing; unchecked, the same click is refused with the
// reason, and the workbench stays stopped. The Start of the notebook tab's
// "not running" page waits the same way. With JavaScript on and off: the
// forms are plain forms.
func TestBrowserStartWaitsInTheQueueWhenNoGPUIsFree(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(map[bool]string{true: "js-on", false: "js-off"}[js], func(t *testing.T) { startOnAFullPool(t, js) })
	}
}

func startOnAFullPool(t *testing.T, js bool) {
	p := newPortal(t)
	bg := context.Background()
	stopped := stoppedOnAFullPool(t, p)
	waits, refused, fromTab := stopped("waits"), stopped("refused"), stopped("from-tab")
	queued := func(wb *models.Workbench) {
		t.Helper()
		got, err := p.srv.Store.WorkbenchByID(bg, wb.ID)
		if err != nil || got.State != models.StateQueued || got.Reason != "waiting in the queue to start again" {
			t.Fatalf("after Start on a full pool: %+v (%v)", got, err)
		}
	}

	// The browser is closed first (cleanups run last first): the queued
	// workbench's page holds an event stream the portal's close would
	// wait for.
	ctx := btSignedIn(t, js, p.ts.URL, "lin", "lin-password-1")
	btNavigate(t, ctx, p.ts.URL+"/workbenches/"+waits.ID)
	if !btChecked(t, ctx, `[data-testid=start-queue]`) {
		t.Fatal("the queue box is not checked by default")
	}
	if resp := btSubmit(t, ctx, "click Start", chromedp.Click(chromedp.CSS(`[data-testid=start]`))); resp.Status != http.StatusOK {
		t.Fatalf("start: status %d", resp.Status)
	}
	btDo(t, ctx, "wait for Leave the queue", chromedp.WaitVisible(chromedp.CSS(`[data-testid=leave-queue]`)))
	queued(waits)
	btScreenshot(t, ctx, "start-queued.png")

	btNavigate(t, ctx, p.ts.URL+"/workbenches/"+refused.ID)
	btDo(t, ctx, "uncheck the queue box", chromedp.Click(chromedp.CSS(`[data-testid=start-queue]`)))
	if btChecked(t, ctx, `[data-testid=start-queue]`) {
		t.Fatal("the queue box stayed checked")
	}
	if resp := btSubmit(t, ctx, "click Start", chromedp.Click(chromedp.CSS(`[data-testid=start]`))); resp.Status != http.StatusOK {
		t.Fatalf("start: status %d", resp.Status)
	}
	// One sentence with one colon, the page's: the refusal's own reads
	// as a dash ("Could not start: not enough free GPUs — 1 × …").
	if msg := btText(t, ctx, `[data-testid=flash]`); !strings.HasPrefix(msg, "Could not start: not enough free GPUs — ") ||
		strings.Count(msg, ": ") != 1 || !strings.HasSuffix(msg, ".") {
		t.Fatalf("flash %q", msg)
	}
	if got, _ := p.srv.Store.WorkbenchByID(bg, refused.ID); got.State != models.StateStopped {
		t.Fatalf("a refused start left it %s", got.State)
	}

	// The notebook tab of a stopped workbench offers Start with the box.
	if resp := btNavigate(t, ctx, p.ts.URL+"/wb/"+fromTab.ID+"/"); resp.Status != http.StatusServiceUnavailable {
		t.Fatalf("notebook URL of a stopped workbench: status %d, want 503", resp.Status)
	}
	if !btChecked(t, ctx, `[data-testid=start-queue]`) {
		t.Fatal("the not-running page's queue box is not checked by default")
	}
	// Back in the notebook tab, whose page now says it waits in the queue
	// (and reloads itself until it runs).
	btSubmit(t, ctx, "click Start in the notebook tab", chromedp.Click(chromedp.CSS(`[data-testid=not-running-start]`)))
	if loc := btLocation(t, ctx).Path; loc != "/wb/"+fromTab.ID+"/" {
		t.Fatalf("start from the notebook tab went to %s, want the notebook's address", loc)
	}
	btDo(t, ctx, "wait for the queued notice", chromedp.WaitVisible(chromedp.CSS(`[data-testid=not-running][data-state=queued]`)))
	queued(fromTab)
}

// stoppedOnAFullPool fills every GPU with a record of admin's and returns a
// maker of lin's stopped 1-GPU workbenches (records: no container).
func stoppedOnAFullPool(t *testing.T, p *testPortal) func(name string) *models.Workbench {
	t.Helper()
	bg := context.Background()
	lin, err := p.srv.Store.CreateUser(bg, models.NewUser{Username: "lin", Password: "lin-password-1", Role: models.RoleUser})
	if err != nil {
		t.Fatal(err)
	}
	fl, err := p.srv.Store.FlavorByNameOrID(bg, "1x H100 80GB HBM3")
	if err != nil {
		t.Fatal(err)
	}
	admin, err := p.srv.Store.UserByUsername(bg, "admin")
	if err != nil {
		t.Fatal(err)
	}
	_, gpus := p.api("GET", "/api/v1/gpus", tokenFor(t, p, "admin", "admin"), "")
	var all []string
	for _, g := range gpus["items"].([]any) {
		all = append(all, g.(map[string]any)["uuid"].(string))
	}
	p.runningRecord(admin, "everything", models.GPUNeed{Model: fl.GPUModel, Count: len(all), Candidates: all})
	return func(name string) *models.Workbench {
		wb := &models.Workbench{Name: name, OwnerID: lin.ID, ImageID: 1, FlavorID: fl.ID, Token: "t", IdleTimeoutS: 3600}
		if err := p.srv.Store.CreateWorkbench(bg, wb, models.GPUNeed{}, nil); err != nil {
			t.Fatal(err)
		}
		if err := p.srv.Store.SetWorkbenchState(bg, wb.ID, models.StateStopped, 0, "stopped by its owner", nil); err != nil {
			t.Fatal(err)
		}
		return wb
	}
}

// The API starts with ?queue=true the same way: 200 with the workbench
// queued; without it the start is refused (409, no_capacity).
func TestAPIStartWithQueue(t *testing.T) {
	p := newPortal(t)
	stopped := stoppedOnAFullPool(t, p)
	wb := stopped("api")
	tok := tokenFor(t, p, "lin", models.RoleUser)
	code, out := p.api("POST", "/api/v1/workbenches/"+wb.ID+"/start", tok, "")
	if apiErr, _ := out["error"].(map[string]any); code != http.StatusConflict || apiErr["code"] != "no_capacity" {
		t.Fatalf("start without queue: %d %v", code, out)
	}
	code, out = p.api("POST", "/api/v1/workbenches/"+wb.ID+"/start?queue=true", tok, "")
	if code != http.StatusOK || out["state"] != "queued" || out["reason"] != "waiting in the queue to start again" {
		t.Fatalf("start with queue: %d %v", code, out)
	}
}
