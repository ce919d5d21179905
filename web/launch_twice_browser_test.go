package web_test

import (
	"context"
	"fmt"
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
			// The workbench page reloads itself when the workbench becomes
			// running (the script, or a meta refresh without it); going back
			// to the form while that reload fires lets the reload win, and the
			// form never appears. A person sees it running, then goes back.
			if got, seen := btWaitWorkbenchState(t, b, "running", 60*time.Second); got != "running" {
				t.Fatalf("the first launch reads %q (states seen %v), want running", got, seen)
			}
			btNavigate(t, b, p.ts.URL+"/workbenches/new") // back to the form
			fill()
			resp := btSubmit(t, b, "click Launch again", chromedp.Click(chromedp.CSS(`[data-testid=launch-form] button[type=submit]`)))
			if got := btLocation(t, b).Path; got != first || resp.Status != 200 {
				t.Fatalf("the same form again: %d at %s, want the first launch's %s", resp.Status, got, first)
			}
		})
	}
}
