package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"workbench/models"
	"workbench/web"
)

// In Chromium, on the real engine: the owner of a preemptible run has its
// page open. An interactive launch that needs its GPU makes it yield: the
// notice appears on the open page without a reload by hand (the state
// stays running, so only the event can bring it). The launch leaves the
// queue: the notice goes, the run is let off and runs on.
func TestBrowserPreemptionNoticeFollowsLive(t *testing.T) {
	p, _ := enginePortal(t, func(c *web.Config) {
		c.Workbenches.DrainEvery = 200 * time.Millisecond
		// Nothing waits for the grace; a long one keeps a loaded machine
		// from ending it before the launch leaves the queue.
		c.Workbenches.PreemptGrace = 30 * time.Minute
	})
	ctx0 := context.Background()
	if _, err := p.srv.Store.CreateUser(ctx0, models.NewUser{Username: "spot", Password: "spot-password", Role: "user"}); err != nil {
		t.Fatal(err)
	}
	admin := tokenFor(t, p, "admin", "admin")
	spot := tokenFor(t, p, "spot", "user")
	eve := tokenFor(t, p, "eve", "user")
	drainGPUs(t, p, admin, 1) // one GPU offered
	code, run := p.api("POST", "/api/v1/workbenches", spot, `{"name":"overnight","image":"fake","flavor":"1x H100 80GB HBM3","preemptible":true}`)
	if code != http.StatusAccepted {
		t.Fatalf("preemptible launch: %d %v", code, run)
	}
	id := run["id"].(string)
	waitState(t, p, spot, id, "running")

	ctx := btNewBrowser(t)
	btNavigate(t, ctx, p.ts.URL+"/login")
	if resp := btLogin(t, ctx, "spot", "spot-password"); resp.Status != http.StatusOK {
		t.Fatalf("login: %d", resp.Status)
	}
	btNavigate(t, ctx, p.ts.URL+"/workbenches/"+id)
	btDo(t, ctx, "the page follows its workbench", chromedp.WaitReady(chromedp.CSS(`[data-testid=wb-status][data-followed]`)))
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("[data-testid=preempt-notice]").length`)); err != nil || n != 0 {
		t.Fatalf("%d notices before any preemption (%v)", n, err)
	}

	code, want := p.api("POST", "/api/v1/workbenches", eve, `{"name":"now","image":"fake","flavor":"1x H100 80GB HBM3","queue":true}`)
	if code != http.StatusAccepted || want["state"] != "queued" {
		t.Fatalf("interactive launch: %d %v", code, want)
	}
	btDo(t, ctx, "the notice appears on the open page", chromedp.WaitVisible(chromedp.CSS(`[data-testid=preempt-notice]`)))
	// Once: the reason the workbench carries meanwhile says the same.
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("[data-testid=wb-status]").innerText`))
	if n := strings.Count(strings.ToLower(text), "checkpoint"); err != nil || n != 1 {
		t.Errorf("the status card tells of the preemption %d times, want once (%v):\n%s", n, err, text)
	}
	if strings.Contains(text, "preemptible preemptible") {
		t.Errorf("the priority says preemptible twice:\n%s", text)
	}

	if code, out := p.api("POST", "/api/v1/workbenches/"+want["id"].(string)+"/stop", eve, ""); code != 200 {
		t.Fatalf("eve leaves the queue: %d %v", code, out)
	}
	btDo(t, ctx, "the notice goes", chromedp.WaitNotPresent(chromedp.CSS(`[data-testid=preempt-notice]`)))
	if _, got := p.api("GET", "/api/v1/workbenches/"+id, spot, ""); got["state"] != "running" || got["preempt_at"] != nil {
		t.Fatalf("after the launch left: %v", got)
	}
}
