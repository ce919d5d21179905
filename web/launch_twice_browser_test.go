package web_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// In Chromium, with JavaScript on and off: the launch form announces a
// scheduled price change, and a person who clicks Launch, returns to the
// form and clicks Launch again with the same values within the minute
// lands on the workbench the first
// click made, not on an error saying the name is taken.
func TestBrowserLaunchFormSentAgainOpensTheWorkbench(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(fmt.Sprintf("javascript=%v", js), func(t *testing.T) {
			p, b := btAdminIn(t, js)
			p.addImage(fakeCatalogImage("fake", "example.invalid/fake:1"))
			from := time.Now().UTC().Add(48 * time.Hour).Truncate(time.Minute)
			if err := p.srv.Store.AddPriceRate(context.Background(), &models.PriceRate{Resource: "cpu", Micros: 50_000,
				EffectiveFrom: from, CreatedBy: "admin"}); err != nil {
				t.Fatal(err)
			}
			fill := func() {
				btDo(t, b, "fill in the launch form",
					chromedp.WaitVisible(chromedp.CSS(`[data-testid=launch-form]`)),
					chromedp.Click(chromedp.CSS(`input[name=image][value="fake"]`)),
					chromedp.Click(chromedp.CSS(`input[name=flavor][value="CPU small"]`)),
					chromedp.SetValue(chromedp.CSS(`input[name=name]`), "again"),
				)
			}
			btNavigate(t, b, p.ts.URL+"/workbenches/new")
			if got := btText(t, b, `[data-testid=price-changes]`); !strings.Contains(got, "CPU") || !strings.Contains(got, from.Format("2006-01-02")) {
				t.Errorf("the launch form's price-change notice reads %q", got)
			}
			fill()
			btSubmit(t, b, "click Launch", chromedp.Click(chromedp.CSS(`[data-testid=launch-form] button[type=submit]`)))
			first := btLocation(t, b).Path
			if !strings.HasPrefix(first, "/workbenches/") || first == "/workbenches/new" {
				t.Fatalf("after Launch the browser is at %s", first)
			}
			// The workbench page reloads itself when the launch ends (its
			// image cannot be pulled here, so it fails: the script reloads,
			// or a meta refresh without it); going back to the form while
			// that reload fires let the reload win in CI, and the form never
			// appeared. A person sees the launch end, then goes back.
			btWaitSettled(t, b, 60*time.Second)
			btNavigate(t, b, p.ts.URL+"/workbenches/new") // back to the form
			fill()
			resp := btSubmit(t, b, "click Launch again", chromedp.Click(chromedp.CSS(`[data-testid=launch-form] button[type=submit]`)))
			if got := btLocation(t, b).Path; got != first || resp.Status != 200 {
				t.Fatalf("the same form again: %d at %s, want the first launch's %s", resp.Status, got, first)
			}
		})
	}
}

// btWaitSettled waits until the workbench page in ctx is a fully loaded
// page rendered for a workbench that is no longer on its way (running,
// failed, stopped…), so nothing reloads it, and returns that state.
func btWaitSettled(t *testing.T, ctx context.Context, limit time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		// A short bound per read: one issued mid-reload may wait for a
		// document being torn down.
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		state, err := chromedp.Run(rctx, chromedp.Evaluate[string](
			`(() => { const st = document.querySelector("[data-testid=wb-status]");
			          return (document.readyState === "complete" && st) ? st.getAttribute("data-state") : ""; })()`))
		cancel()
		switch {
		case err != nil, state == "":
		case !slices.Contains([]string{"queued", "requested", "pulling", "creating", "starting", "stopping"}, state):
			return state
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the workbench page did not settle within %v", limit)
	return ""
}
