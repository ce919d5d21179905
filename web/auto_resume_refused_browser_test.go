package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// In Chromium, JavaScript on and off: a person ticks "Resume automatically
// after a preemption" on the launch form without "Preemptible" and clicks
// Launch. The form comes back with the error beside the box (the box tied
// to it for screen readers), what they typed and ticked kept, and nothing
// launched; ticking Preemptible as well, the launch goes.
func TestBrowserAutoResumeWithoutPreemptibleIsRefusedBesideTheBox(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) {
			p := newPortal(t)
			alice := tokenFor(t, p, "alice", "user")
			b := btSignedIn(t, js, p.ts.URL, "alice", "alice-password")
			btNavigate(t, b, p.ts.URL+"/workbenches/new")
			btDo(t, b, "fill the launch form",
				chromedp.WaitVisible(chromedp.CSS(`[data-testid=launch-form]`)),
				chromedp.Click(chromedp.CSS(`[data-testid=flavor-choice] input[name=flavor][value="1x H100 80GB HBM3"]`)),
				chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "spot-run"),
				chromedp.Click(chromedp.CSS(`[data-testid=launch-auto-resume]`)),
			)
			btSubmit(t, b, "launch", chromedp.Click(chromedp.CSS(`[data-testid=launch-submit]`)))
			if msg := btText(t, b, `[data-testid=error-auto_resume]`); !strings.Contains(msg, "only a preemptible run is resumed after a preemption") {
				t.Errorf("beside the box: %q, want why auto-resume needs preemptible", msg)
			}
			got, err := chromedp.Run(b, chromedp.Evaluate[string](`(() => { const box = document.querySelector("[data-testid=launch-auto-resume]");
				return box.getAttribute("aria-describedby") + " " + box.checked; })()`))
			if err != nil || got != "error-auto_resume true" {
				t.Errorf("the box: aria-describedby and checked = %q (%v); want it tied to its error and still ticked", got, err)
			}
			if name := btValue(t, b, `input[name=name]`); name != "spot-run" {
				t.Errorf("the form lost the name: %q", name)
			}
			if _, list := p.api("GET", "/api/v1/workbenches", alice, ""); len(list["items"].([]any)) != 0 {
				t.Fatalf("the refused launch made a workbench: %v", list["items"])
			}

			btDo(t, b, "tick Preemptible", chromedp.Click(chromedp.CSS(`[data-testid=launch-preemptible]`)))
			btSubmit(t, b, "launch", chromedp.Click(chromedp.CSS(`[data-testid=launch-submit]`)))
			_, list := p.api("GET", "/api/v1/workbenches", alice, "")
			items := list["items"].([]any)
			if len(items) != 1 {
				t.Fatalf("the preemptible launch made %d workbenches, want 1", len(items))
			}
			if wb := items[0].(map[string]any); wb["auto_resume"] != true || wb["preemptible"] != true {
				t.Errorf("launched: auto_resume %v preemptible %v, want both", wb["auto_resume"], wb["preemptible"])
			}
			p.srv.Manager.Wait()
		})
	}
}
