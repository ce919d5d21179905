package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Another user's booking open now holds 3 of the 8 GPUs. bob opens the
// launch form and reads, on each GPU flavor, what he may take: "5 free ·
// 3 reserved for others now"; the 6-GPU flavor says it would wait. He picks
// the 5-GPU flavor, which fits, and clicks Launch: the workbench is placed
// at once (its GPUs bound, never queued), not refused as reserved for
// someone else. With JavaScript on and off.
func TestBrowserFreeCountsLeaveOutOthersBookings(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) { testBrowserFreeCounts(t, js) })
	}
}

func testBrowserFreeCounts(t *testing.T, js bool) {
	p := newPortal(t)
	p.addImage(fakeCatalogImage("fake", "example.invalid/fake:1")) // placed, then its pull fails: no container needed
	admin := tokenFor(t, p, "admin", "admin")
	alice := tokenFor(t, p, "alice", "user")
	tokenFor(t, p, "bob", "user")
	for _, n := range []int{5, 6} {
		body := fmt.Sprintf(`{"name":"%dx H100","gpu_model":"NVIDIA H100 80GB HBM3","gpu_count":%d,"cpu_cores":1,"memory_gib":1}`, n, n)
		if code, out := p.api("POST", "/api/v1/flavors", admin, body); code != http.StatusCreated {
			t.Fatalf("flavor %dx: %d %v", n, code, out)
		}
	}
	now := time.Now().UTC()
	booking := fmt.Sprintf(`{"gpu_model":"NVIDIA H100 80GB HBM3","units":3,"starts_at":%q,"ends_at":%q}`,
		now.Add(-time.Minute).Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339))
	if code, out := p.api("POST", "/api/v1/reservations", alice, booking); code != http.StatusCreated {
		t.Fatalf("alice books 3 GPUs now: %d %v", code, out)
	}

	ctx := btNewBrowser(t)
	if !js {
		btDo(t, ctx, "disable JavaScript", btScriptsOff())
	}
	btNavigate(t, ctx, p.ts.URL+"/login")
	if resp := btLogin(t, ctx, "bob", "bob-password"); resp.Status != http.StatusOK {
		t.Fatalf("bob's login: %d", resp.Status)
	}
	btNavigate(t, ctx, p.ts.URL+"/workbenches/new")
	btDo(t, ctx, "wait for the launch form", chromedp.WaitVisible(chromedp.CSS(`[data-testid=launch-form]`)))
	card := func(flavor, part string) string {
		t.Helper()
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
			const c = [...document.querySelectorAll("[data-testid=flavor-choice]")].find(c => c.querySelector('input[name=flavor][value=`+btJsString(flavor)+`]'));
			const e = c && c.querySelector(`+btJsString(part)+`);
			return e ? e.innerText.replace(/\s+/g, " ").trim() : ""; })()`))
		if err != nil {
			t.Fatalf("read %s of %s: %v", part, flavor, err)
		}
		return got
	}
	for _, f := range []string{"1x H100 80GB HBM3", "5x H100", "6x H100"} {
		if got, want := card(f, "[data-testid=free-gpus]"), "5 free · 3 reserved for others now"; got != want {
			t.Errorf("%s says %q, want %q", f, got, want)
		}
	}
	if w := card("5x H100", "[data-testid=flavor-waits]"); w != "" {
		t.Errorf("the 5-GPU flavor, which fits, says it waits: %q", w)
	}
	if w := card("6x H100", "[data-testid=flavor-waits]"); !strings.Contains(w, "needs 6 GPUs, 5 free") {
		t.Errorf("the 6-GPU flavor says %q, want that it waits: 5 free", w)
	}
	btScreenshot(t, ctx, "free-counts-"+jsName(js)+".png")

	btDo(t, ctx, "pick the image, the 5-GPU flavor and a name",
		chromedp.Click(chromedp.CSS(`[data-testid=image-choice] input[name=image][value="fake"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=flavor-choice] input[name=flavor][value="5x H100"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "fits"),
	)
	resp := btSubmit(t, ctx, "click Launch", chromedp.Click(chromedp.CSS(`[data-testid=launch-submit]`)))
	loc := btLocation(t, ctx).Path
	if resp.Status != http.StatusOK || !strings.HasPrefix(loc, "/workbenches/") || loc == "/workbenches/new" {
		t.Fatalf("launch of what fits: status %d at %s (%q)", resp.Status, loc, btTexts(t, ctx, `[data-testid=launch-error]`))
	}
	id := strings.TrimPrefix(loc, "/workbenches/")
	btWaitSettled(t, ctx, 60*time.Second) // the pull fails here: the page stops reloading
	hist, err := p.srv.Store.WorkbenchHistory(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, e := range hist {
		states = append(states, e.State)
	}
	got := " " + strings.Join(states, " ") + " "
	if strings.Contains(got, " queued ") || !strings.Contains(got, " pulling ") {
		t.Fatalf("the workbench went through %q; want it placed (pulling), never queued", got)
	}
}
