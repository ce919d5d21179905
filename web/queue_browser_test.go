package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// A user launches on a full pool with the form's default "wait for a free
// GPU": the workbench page shows its place in the queue and why it waits;
// when the GPU's holder stops, the page follows it to running by itself
// (server-sent events with JavaScript, a meta refresh without). A second
// queued launch is taken out with "Leave the queue".
func TestBrowserQueuedLaunchStartsAfterAStop(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) { testBrowserQueuedLaunch(t, js) })
	}
}

func testBrowserQueuedLaunch(t *testing.T, js bool) {
	p, _ := enginePortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	bob := tokenFor(t, p, "bob", "user")
	if _, err := p.srv.Store.CreateUser(context.Background(), models.NewUser{Username: "alice", Password: "alice-password", Role: "user"}); err != nil {
		t.Fatal(err)
	}
	// One GPU offered (seven drained), held by bob.
	_, gpus := p.api("GET", "/api/v1/gpus", admin, "")
	for _, it := range gpus["items"].([]any)[1:] {
		uuid := it.(map[string]any)["uuid"].(string)
		if code, out := p.api("PUT", "/api/v1/gpus/"+uuid+"/drain", admin, `{"drained":true}`); code != 200 {
			t.Fatalf("drain: %d %v", code, out)
		}
	}
	code, held := p.api("POST", "/api/v1/workbenches", bob, `{"name":"holder","image":"fake","flavor":"1x H100 80GB HBM3"}`)
	if code != http.StatusAccepted {
		t.Fatalf("bob's launch: %d %v", code, held)
	}
	waitState(t, p, bob, held["id"].(string), "running")

	ctx := btNewBrowser(t)
	if !js {
		btDo(t, ctx, "disable JavaScript", btScriptsOff())
	}
	btNavigate(t, ctx, p.ts.URL+"/login")
	if resp := btLogin(t, ctx, "alice", "alice-password"); resp.Status != http.StatusOK {
		t.Fatalf("login: %d", resp.Status)
	}
	btNavigate(t, ctx, p.ts.URL+"/workbenches/new")
	btDo(t, ctx, "fill the launch form",
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=launch-form]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=image-choice] input[name=image][value="fake"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=flavor-choice] input[name=flavor][value="1x H100 80GB HBM3"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "waiter"),
	)
	wait, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector("[data-testid=launch-queue]").checked`))
	if err != nil || !wait {
		t.Fatalf(`"wait for a free GPU" is not checked by default (%v)`, err)
	}
	if resp := btSubmit(t, ctx, "launch", chromedp.Click(chromedp.CSS(`[data-testid=launch-submit]`))); resp.Status != http.StatusOK {
		t.Fatalf("launch: %d at %s", resp.Status, resp.URL)
	}
	if state, seen := btWaitWorkbenchState(t, ctx, "queued", 30*time.Second); state != "queued" {
		t.Fatalf("page shows %q (seen %v), want queued", state, seen)
	}
	btDo(t, ctx, "wait for the queue notice", chromedp.WaitVisible(chromedp.CSS(`[data-testid=queue-notice]`)))
	if js {
		// The page follows live updates without reloading while the
		// state stays queued (a script that misread waiting_for once
		// reloaded it on every update).
		btDo(t, ctx, "the queued page applies a live update and stays",
			chromedp.WaitReady(chromedp.CSS(`[data-testid=wb-status][data-followed]`)))
	}
	if pos := btText(t, ctx, `[data-testid=queue-position]`); pos != "Position 1 in the queue" {
		t.Errorf("position %q", pos)
	}
	if why := btText(t, ctx, `[data-testid=queue-reason]`); !strings.Contains(why, "1 × H100 80GB HBM3 needed; 0 free; you are next") {
		t.Errorf("reason %q", why)
	}
	btScreenshot(t, ctx, "workbench-queued-"+jsName(js)+".png")

	if code, out := p.api("POST", "/api/v1/workbenches/"+held["id"].(string)+"/stop", bob, ""); code != 200 {
		t.Fatalf("bob's stop: %d %v", code, out)
	}
	if state, seen := btWaitWorkbenchState(t, ctx, "running", 90*time.Second); state != "running" {
		t.Fatalf("after the stop the page shows %q (seen %v), want running", state, seen)
	}

	// The one GPU is alice's now: a second launch waits, and she leaves the
	// queue from its page.
	alice := tokenFor(t, p, "alice", "user")
	code, second := p.api("POST", "/api/v1/workbenches", alice, `{"name":"second","image":"fake","flavor":"1x H100 80GB HBM3","queue":true}`)
	if code != http.StatusAccepted || second["state"] != "queued" {
		t.Fatalf("second launch: %d %v, want queued", code, second)
	}
	btNavigate(t, ctx, p.ts.URL+"/workbenches/"+second["id"].(string))
	if state, seen := btWaitWorkbenchState(t, ctx, "queued", 30*time.Second); state != "queued" {
		t.Fatalf("second page shows %q (seen %v), want queued", state, seen)
	}
	if resp := btSubmit(t, ctx, `click "Leave the queue"`, chromedp.Click(chromedp.CSS(`[data-testid=leave-queue]`))); resp.Status != http.StatusOK {
		t.Fatalf("leave the queue: %d at %s", resp.Status, resp.URL)
	}
	if state, seen := btWaitWorkbenchState(t, ctx, "stopped", 30*time.Second); state != "stopped" {
		t.Fatalf("after leaving the queue the page shows %q (seen %v), want stopped", state, seen)
	}
	// It never held a GPU: the notice must not say its GPUs are free.
	if flash := btText(t, ctx, `[data-testid=flash]`); !strings.Contains(flash, "Left the queue") || strings.Contains(flash, "GPUs are free") {
		t.Fatalf("after leaving the queue the page says %q", flash)
	}
	if code, out := p.api("GET", "/api/v1/workbenches/"+second["id"].(string), alice, ""); code != 200 || out["state"] != "stopped" || !strings.Contains(out["reason"].(string), "left the queue") {
		t.Fatalf("after leaving the queue: %d %v", code, out)
	}
}
