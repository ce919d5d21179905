package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// In Chromium, JavaScript on and off: a person chooses a flavor without
// GPUs, ticks "Preemptible" and clicks Launch. The form comes back with the
// error beside the box (the box tied to it for screen readers), what they
// typed and chose kept, and nothing launched; unticking Preemptible, the
// launch goes, not preemptible.
func TestBrowserPreemptibleWithoutGPUIsRefusedBesideTheBox(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) {
			p := newPortal(t)
			alice := tokenFor(t, p, "alice", "user")
			b := btSignedIn(t, js, p.ts.URL, "alice", "alice-password")
			btNavigate(t, b, p.ts.URL+"/workbenches/new")
			btDo(t, b, "fill the launch form",
				chromedp.WaitVisible(chromedp.CSS(`[data-testid=launch-form]`)),
				chromedp.Click(chromedp.CSS(`[data-testid=flavor-choice] input[name=flavor][value="CPU small"]`)),
				chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "cpu-spot"),
				chromedp.Click(chromedp.CSS(`[data-testid=launch-preemptible]`)),
			)
			btSubmit(t, b, "launch", chromedp.Click(chromedp.CSS(`[data-testid=launch-submit]`)))
			if msg := btText(t, b, `[data-testid=error-preemptible]`); !strings.Contains(msg, "a flavor without GPUs is never preempted and has no preemptible price") {
				t.Errorf("beside the box: %q, want why preemptible needs a GPU", msg)
			}
			got, err := chromedp.Run(b, chromedp.Evaluate[string](`(() => { const box = document.querySelector("[data-testid=launch-preemptible]");
				const fl = document.querySelector("input[name=flavor]:checked");
				return box.getAttribute("aria-describedby") + " " + box.checked + " " + (fl ? fl.value : ""); })()`))
			if err != nil || got != "error-preemptible true CPU small" {
				t.Errorf("the box and flavor: %q (%v); want the box tied to its error and still ticked, CPU small still chosen", got, err)
			}
			if name := btValue(t, b, `input[name=name]`); name != "cpu-spot" {
				t.Errorf("the form lost the name: %q", name)
			}
			if _, list := p.api("GET", "/api/v1/workbenches", alice, ""); len(list["items"].([]any)) != 0 {
				t.Fatalf("the refused launch made a workbench: %v", list["items"])
			}

			btDo(t, b, "untick Preemptible", chromedp.Click(chromedp.CSS(`[data-testid=launch-preemptible]`)))
			btSubmit(t, b, "launch", chromedp.Click(chromedp.CSS(`[data-testid=launch-submit]`)))
			_, list := p.api("GET", "/api/v1/workbenches", alice, "")
			items := list["items"].([]any)
			if len(items) != 1 {
				t.Fatalf("the launch without preemptible made %d workbenches, want 1", len(items))
			}
			if wb := items[0].(map[string]any); wb["preemptible"] != false || wb["name"] != "cpu-spot" {
				t.Errorf("launched: name %v preemptible %v, want cpu-spot, not preemptible", wb["name"], wb["preemptible"])
			}
			p.srv.Manager.Wait()
		})
	}
}
