package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// Two GPUs offered (six drained): bob holds one, carol's 2-GPU request
// waits in the queue for both. Alice unticks "Wait for a free GPU" and
// clicks Launch for one GPU: the page refuses it with the queue's reason
// (before, she took the GPU carol waited for), the form keeps her choices,
// and she has no workbench; carol's request still waits with the GPU free.
func TestBrowserLaunchWithoutWaitingDoesNotJumpTheQueue(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) { launchWithoutWaiting(t, js) })
	}
}

func launchWithoutWaiting(t *testing.T, js bool) {
	p, _ := enginePortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	bob := tokenFor(t, p, "bob", "user")
	carol := tokenFor(t, p, "carol", "user")
	if _, err := p.srv.Store.CreateUser(context.Background(), models.NewUser{Username: "alice", Password: "alice-password", Role: "user"}); err != nil {
		t.Fatal(err)
	}
	_, gpus := p.api("GET", "/api/v1/gpus", admin, "")
	for _, it := range gpus["items"].([]any)[2:] {
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
	code, pair := p.api("POST", "/api/v1/workbenches", carol, `{"name":"pair","image":"fake","flavor":"2x H100 80GB HBM3","queue":true}`)
	if code != http.StatusAccepted || pair["state"] != "queued" {
		t.Fatalf("carol's 2-GPU launch: %d %v, want queued", code, pair)
	}

	ctx := btNewBrowser(t)
	if !js {
		btDo(t, ctx, "disable JavaScript", btScriptsOff())
	}
	btNavigate(t, ctx, p.ts.URL+"/login")
	if resp := btLogin(t, ctx, "alice", "alice-password"); resp.Status != http.StatusOK {
		t.Fatalf("login: %d", resp.Status)
	}
	btNavigate(t, ctx, p.ts.URL+"/workbenches/new")
	btDo(t, ctx, "fill the launch form, not waiting",
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=launch-form]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=image-choice] input[name=image][value="fake"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=flavor-choice] input[name=flavor][value="1x H100 80GB HBM3"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "jumper"),
		chromedp.Click(chromedp.CSS(`[data-testid=launch-queue]`)),
	)
	resp := btSubmit(t, ctx, "launch", chromedp.Click(chromedp.CSS(`[data-testid=launch-submit]`)))
	if path := btLocation(t, ctx).Path; strings.HasPrefix(path, "/workbenches/") && path != "/workbenches/new" {
		t.Fatalf("the launch was taken: %d at %s", resp.Status, path)
	}
	msg := btText(t, ctx, `[data-testid=launch-error]`)
	if !strings.HasPrefix(msg, "Could not launch: ") || !strings.Contains(msg, "others wait in the queue for these GPUs") || !strings.Contains(msg, "launch with queue") {
		t.Errorf("the refusal reads %q, want the queue's reason", msg)
	}
	if name := btValue(t, ctx, `input[name=name]`); name != "jumper" {
		t.Errorf("the form lost the name: %q", name)
	}
	btScreenshot(t, ctx, "launch-no-queue-refused-"+jsName(js)+".png")
	aliceTok := tokenFor(t, p, "alice", "user")
	if _, mine := p.api("GET", "/api/v1/workbenches", aliceTok, ""); len(mine["items"].([]any)) != 0 {
		t.Errorf("the refused launch left a workbench: %v", mine["items"])
	}
	if _, got := p.api("GET", "/api/v1/workbenches/"+pair["id"].(string), carol, ""); got["state"] != "queued" {
		t.Errorf("carol's request after alice's try: %v, want still queued", got["state"])
	}
}
