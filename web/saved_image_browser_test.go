package web_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Save as image, as a person does it: on her stopped workbench's page alice
// opens "Save as image", names it and clicks Save; she lands on My images,
// which lists the image with its size, and the launch form offers it.
func TestBrowserSaveAsImage(t *testing.T) {
	p, _ := enginePortal(t)
	alice := tokenFor(t, p, "alice", "user")
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"env","image":"fake","flavor":"CPU small"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, p, alice, id, "running")
	if code, _ := p.api("POST", "/api/v1/workbenches/"+id+"/stop", alice, ""); code != 200 {
		t.Fatalf("stop: %d", code)
	}
	waitState(t, p, alice, id, "stopped")

	ctx := btNewBrowserWithin(t, 2*time.Minute)
	btNavigate(t, ctx, p.ts.URL+"/login")
	if resp := btLogin(t, ctx, "alice", "alice-password"); resp.Status != http.StatusOK {
		t.Fatalf("login: %d", resp.Status)
	}
	btNavigate(t, ctx, p.ts.URL+"/workbenches/"+id)
	btDo(t, ctx, "open Save as image",
		chromedp.Click(chromedp.CSS(`[data-testid=save-image] summary`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=save-image-name]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=save-image-name]`), "my-env"),
	)
	if resp := btSubmit(t, ctx, "click Save as image", chromedp.Click(chromedp.CSS(`[data-testid=save-image-submit]`))); resp.Status != http.StatusOK {
		t.Fatalf("save: %d at %s", resp.Status, resp.URL)
	}
	if loc := btLocation(t, ctx); loc.Path != "/images/saved" {
		t.Fatalf("after saving the browser is at %s, want /images/saved", loc)
	}
	rows := btTexts(t, ctx, `[data-testid=saved-image-row]`)
	if len(rows) != 1 || !strings.Contains(rows[0], "my-env v1 (alice)") {
		t.Fatalf("My images rows: %q", rows)
	}
	if size := btText(t, ctx, `[data-testid=saved-image-size]`); size == "" || !strings.Contains(size, "iB") {
		t.Errorf("size shown %q", size)
	}
	btScreenshot(t, ctx, "my-images.png")
	btNavigate(t, ctx, p.ts.URL+"/workbenches/new")
	if !btVisible(t, ctx, `input[name=image][value="my-env v1 (alice)"]`) {
		t.Errorf("the saved image is not offered in the launch form")
	}
}
