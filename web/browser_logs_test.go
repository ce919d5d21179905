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

// "follow live" tails the container's log inside the workbench page: the
// page stays where it is and new lines appear as the container writes
// them. Screenshots: workbench-follow-logs.png, image-test-result.png,
// catalog-admin.png.
func TestBrowserFollowLogsInThePage(t *testing.T) {
	p, _ := enginePortal(t)
	ctx := context.Background()
	if _, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "alice", Password: "alice-password", Role: "user"}); err != nil {
		t.Fatal(err)
	}
	alice := tokenFor(t, p, "alice", "user")
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"chatty","image":"fake","flavor":"CPU small"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, p, alice, id, "running")

	b := btNewBrowser(t)
	btNavigate(t, b, p.ts.URL+"/login")
	btLogin(t, b, "alice", "alice-password")
	page := p.ts.URL + "/workbenches/" + id
	btNavigate(t, b, page)
	btDo(t, b, `click "follow live"`, chromedp.Click(chromedp.CSS(`[data-testid=follow-logs]`)))
	waitText := func(want string) string {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			txt, err := chromedp.Run(b, chromedp.Evaluate[string](`(document.querySelector('[data-testid=wb-logs][data-following=true]')||{}).textContent||""`))
			if err == nil && strings.Contains(txt, want) {
				return txt
			}
			if time.Now().After(deadline) {
				t.Fatalf("the page's log never showed %q (it shows %q, err %v)", want, txt, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitText("Fake JupyterLab listening")

	// The container writes a new line: it appears in the page, live.
	c := p.client()
	p.login(c, "alice", "alice-password")
	req, _ := http.NewRequest("POST", p.ts.URL+"/wb/"+id+"/api/kernels", strings.NewReader(`{"name":"python3"}`))
	req.Header.Set("Origin", p.ts.URL)
	req.Header.Set("Content-Type", "application/json")
	res, err := c.Do(req)
	if err != nil || res.StatusCode >= 300 {
		t.Fatalf("start a kernel: %v %v", res, err)
	}
	res.Body.Close()
	waitText("kernel started")
	if loc := btLocation(t, b); loc.String() != page {
		t.Errorf("following the log moved the browser to %s", loc)
	}
	if label := btText(t, b, `[data-testid=follow-logs]`); label != "stop following" {
		t.Errorf("follow link reads %q while following", label)
	}
	// A toggle to assistive technology, outside the heading.
	if got, err := chromedp.Run(b, chromedp.Evaluate[string](`(() => { const a = document.querySelector("[data-testid=follow-logs]");
		return [a.getAttribute("role"), a.getAttribute("aria-pressed"), a.closest("h2") === null].join(" "); })()`)); err != nil || got != "button true true" {
		t.Errorf("follow toggle: role, aria-pressed, outside the heading = %q (%v)", got, err)
	}
	btScreenshot(t, b, "workbench-follow-logs.png")

	// Admin views for the reviewer: a failed Test image and the catalog.
	fake, _ := p.srv.Store.ImageByNameOrID(ctx, "fake")
	bad := &models.Image{Name: "misconfigured", Image: fake.Image, StartCommand: fake.StartCommand, RunAsUser: "nobody-here",
		HomePath: fake.HomePath, Enabled: true}
	if err := p.srv.Store.CreateImage(ctx, bad); err != nil {
		t.Fatal(err)
	}
	admin := tokenFor(t, p, "admin", "admin")
	chk := runImageTest(t, p, admin, bad.ID)
	a := btNewBrowser(t)
	btNavigate(t, a, p.ts.URL+"/login")
	btLogin(t, a, "admin", adminPassword)
	btNavigate(t, a, p.ts.URL+"/admin/images/"+itoa(bad.ID)+"/tests/"+itoa(int64(chk["id"].(float64))))
	btScreenshot(t, a, "image-test-result.png")
	btNavigate(t, a, p.ts.URL+"/catalog")
	btScreenshot(t, a, "catalog-admin.png")
	btNavigate(t, a, p.ts.URL+"/admin/images/"+itoa(bad.ID)+"/edit")
	btScreenshot(t, a, "image-form.png")
	p.srv.Manager.Wait()
}
