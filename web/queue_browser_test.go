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
// when the GPU's holder stops, the page follows it to running by itself.
func TestBrowserQueuedLaunchStartsAfterAStop(t *testing.T) {
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
	if pos := btText(t, ctx, `[data-testid=queue-position]`); pos != "Position 1 in the queue" {
		t.Errorf("position %q", pos)
	}
	if why := btText(t, ctx, `[data-testid=queue-reason]`); !strings.Contains(why, "1 × H100 80GB HBM3 needed; 0 free; you are next") {
		t.Errorf("reason %q", why)
	}
	btScreenshot(t, ctx, "workbench-queued.png")

	if code, out := p.api("POST", "/api/v1/workbenches/"+held["id"].(string)+"/stop", bob, ""); code != 200 {
		t.Fatalf("bob's stop: %d %v", code, out)
	}
	if state, seen := btWaitWorkbenchState(t, ctx, "running", 90*time.Second); state != "running" {
		t.Fatalf("after the stop the page shows %q (seen %v), want running", state, seen)
	}
}
