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
// with "if none is free, wait in the queue" left checked (the default) puts
// it in the queue — the page says queued and offers Leave the queue —
// instead of refusing; unchecked, the same click is refused with the
// reason, and the workbench stays stopped.
func TestBrowserStartWaitsInTheQueueWhenNoGPUIsFree(t *testing.T) {
	p := newPortal(t)
	bg := context.Background()
	stopped := stoppedOnAFullPool(t, p)
	waits, refused := stopped("waits"), stopped("refused")

	// The browser is closed first (cleanups run last first): the queued
	// workbench's page holds an event stream the portal's close would
	// wait for.
	ctx := btNewBrowser(t)
	btNavigate(t, ctx, p.ts.URL+"/login")
	if resp := btLogin(t, ctx, "lin", "lin-password-1"); resp.Status != http.StatusOK {
		t.Fatalf("login: %d", resp.Status)
	}
	btNavigate(t, ctx, p.ts.URL+"/workbenches/"+waits.ID)
	if !btChecked(t, ctx, `[data-testid=start-queue]`) {
		t.Fatal("the queue box is not checked by default")
	}
	if resp := btSubmit(t, ctx, "click Start", chromedp.Click(chromedp.CSS(`[data-testid=start]`))); resp.Status != http.StatusOK {
		t.Fatalf("start: status %d", resp.Status)
	}
	btDo(t, ctx, "wait for Leave the queue", chromedp.WaitVisible(chromedp.CSS(`[data-testid=leave-queue]`)))
	got, err := p.srv.Store.WorkbenchByID(bg, waits.ID)
	if err != nil || got.State != models.StateQueued || got.Reason != "waiting in the queue to start again" {
		t.Fatalf("after Start on a full pool: %+v (%v)", got, err)
	}
	btScreenshot(t, ctx, "start-queued.png")

	btNavigate(t, ctx, p.ts.URL+"/workbenches/"+refused.ID)
	btDo(t, ctx, "uncheck the queue box", chromedp.Click(chromedp.CSS(`[data-testid=start-queue]`)))
	if btChecked(t, ctx, `[data-testid=start-queue]`) {
		t.Fatal("the queue box stayed checked")
	}
	if resp := btSubmit(t, ctx, "click Start", chromedp.Click(chromedp.CSS(`[data-testid=start]`))); resp.Status != http.StatusOK {
		t.Fatalf("start: status %d", resp.Status)
	}
	if msg := btText(t, ctx, `[data-testid=flash]`); !strings.HasPrefix(msg, "Could not start: not enough free GPUs") {
		t.Fatalf("flash %q", msg)
	}
	if got, _ := p.srv.Store.WorkbenchByID(bg, refused.ID); got.State != models.StateStopped {
		t.Fatalf("a refused start left it %s", got.State)
	}
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
