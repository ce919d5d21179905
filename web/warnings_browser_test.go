package web_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// In Chromium with JavaScript on, a person reads when their workbench will
// stop and clicks "+1 h": the page comes back with the later stop time.
// Screenshots of the workbench page, the launch form (a flavor disabled
// with its reason) and /gpus (the per-model summary) are kept for review.
func TestBrowserDeadlinesAndExtend(t *testing.T) {
	p, _ := enginePortal(t)
	alice := tokenFor(t, p, "alice", "user")
	_, adminTok := mpAdmin(t, p)
	_, flavors := p.api("GET", "/api/v1/flavors", adminTok, "")
	var cpuSmall string
	for _, it := range flavors["items"].([]any) {
		if f := it.(map[string]any); f["name"] == "CPU small" {
			cpuSmall = itoa(int64(f["id"].(float64)))
		}
	}
	if st, body := p.api("PUT", "/api/v1/flavors/"+cpuSmall, adminTok,
		`{"name":"CPU small","cpu_cores":1,"memory_gib":2,"max_runtime_seconds":7200,"enabled":true}`); st != 200 {
		t.Fatalf("flavor max runtime: %d %v", st, body)
	}
	_, gpus := p.api("GET", "/api/v1/gpus", adminTok, "")
	uuid := gpus["items"].([]any)[0].(map[string]any)["uuid"].(string)
	p.api("PUT", "/api/v1/gpus/"+uuid+"/drain", adminTok, `{"drained":true}`)
	id := cullLaunch(t, p, alice, "deadline-exp", "CPU small", 3600)
	wb := waitState(t, p, alice, id, "running")
	started, _ := time.Parse(time.RFC3339, wb["started_at"].(string))

	ctx := btNewBrowser(t)
	dir := filepath.Join(btArtifactDir(t), "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	btNavigate(t, ctx, p.ts.URL+"/login")
	if resp := btLogin(t, ctx, "alice", "alice-password"); resp.Status != http.StatusOK {
		t.Fatalf("alice login: status %d", resp.Status)
	}
	btNavigate(t, ctx, p.ts.URL+"/workbenches/"+id)
	btDo(t, ctx, "wait for the deadlines", chromedp.WaitVisible(chromedp.CSS(`[data-testid=wb-deadlines]`)))
	before := btText(t, ctx, `[data-testid=wb-deadlines] [data-testid=wb-runtime-deadline]`)
	if want := started.Add(2 * time.Hour).UTC().Format("15:04 UTC"); !strings.Contains(before, want) {
		t.Fatalf("runtime deadline %q, want %s", before, want)
	}
	btScreenshot(t, ctx, "screenshots/workbench-deadlines.png")
	if resp := btSubmit(t, ctx, "click +1 h", chromedp.Click(chromedp.CSS(`[data-testid=wb-deadlines] [data-testid=extend]`))); resp.Status != http.StatusOK {
		t.Fatalf("+1 h: status %d at %s", resp.Status, resp.URL)
	}
	btDo(t, ctx, "wait for the page after +1 h", chromedp.WaitVisible(chromedp.CSS(`[data-testid=wb-deadlines]`)))
	after := btText(t, ctx, `[data-testid=wb-deadlines] [data-testid=wb-runtime-deadline]`)
	if want := started.Add(3 * time.Hour).UTC().Format("15:04 UTC"); !strings.Contains(after, want) {
		t.Errorf("after +1 h the runtime deadline reads %q, want %s", after, want)
	}
	if f := btText(t, ctx, `[data-testid=flash]`); !strings.Contains(f, "extended") {
		t.Errorf("flash %q does not confirm the extension", f)
	}
	btScreenshot(t, ctx, "screenshots/workbench-extended.png")

	btNavigate(t, ctx, p.ts.URL+"/workbenches/new")
	btDo(t, ctx, "wait for the launch form", chromedp.WaitVisible(chromedp.CSS(`[data-testid=launch-form]`)))
	// One GPU drained: the 8-GPU flavor can be chosen (it waits in the
	// queue for the GPU back in service) and its card says so.
	disabled, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('input[name=flavor][value="8x H100 80GB HBM3"]').disabled`))
	if err != nil || disabled {
		t.Errorf("8x H100 with one GPU drained is disabled (%v)", err)
	}
	waits, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector('input[name=flavor][value="8x H100 80GB HBM3"]').closest('[data-testid=flavor-choice]').querySelector('[data-testid=flavor-waits]') || {}).textContent || ""`))
	if err != nil || !strings.Contains(waits, "drained") {
		t.Errorf("8x H100 with one GPU drained: wait note %q (%v)", waits, err)
	}
	// Keyboard users see where they are: a radio card shows a focus ring,
	// and the skip link comes into view when focused and leads to #main.
	ring, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
	  const i = document.querySelector('input[name=flavor]:not([disabled])'); i.focus();
	  const s = getComputedStyle(i.closest('.choice-card'));
	  return s.outlineStyle + " " + s.outlineWidth; })()`))
	if err != nil || ring != "solid 3px" {
		t.Errorf("a focused radio card's outline is %q (%v), want a solid 3px ring", ring, err)
	}
	skip, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
	  const a = document.querySelector('[data-testid=skip-link]'); a.focus();
	  const r = a.getBoundingClientRect();
	  return (r.top >= 0 ? "visible" : "hidden") + " " + a.getAttribute("href") + " " + (document.getElementById("main") ? "target" : "no-target"); })()`))
	if err != nil || skip != "visible #main target" {
		t.Errorf("skip link: %q (%v), want it visible when focused and leading to #main", skip, err)
	}
	btScreenshot(t, ctx, "screenshots/launch-form.png")

	btNavigate(t, ctx, p.ts.URL+"/gpus")
	btDo(t, ctx, "wait for the GPU summary", chromedp.WaitVisible(chromedp.CSS(`[data-testid=gpu-model-summary]`)))
	btScreenshot(t, ctx, "screenshots/gpus-summary.png")
}
