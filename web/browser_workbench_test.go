package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// A user logs in through the form, launches the fake Jupyter image on the
// CPU-only flavor from the launch page, watches the workbench page follow
// the launch to "running" (SSE plus reload, no manual refresh), then opens
// JupyterLab and gets the notebook's page through the portal's proxy.
func TestBrowserLaunchAndOpenJupyter(t *testing.T) {
	p, _ := enginePortal(t)
	if _, err := p.srv.Store.CreateUser(context.Background(), models.NewUser{
		Username: "alice", Password: "alice-password", Role: "user"}); err != nil {
		t.Fatalf("create alice: %v", err)
	}
	// The browser starts only after the image exists: building the fake
	// image on a cold engine would eat into btTimeout.
	ctx := btNewBrowser(t)

	btNavigate(t, ctx, p.ts.URL+"/login")
	if resp := btLogin(t, ctx, "alice", "alice-password"); resp.Status != http.StatusOK {
		t.Fatalf("alice login: status %d at %s", resp.Status, resp.URL)
	}
	if loc := btLocation(t, ctx); loc.Path != "/" {
		t.Fatalf("after login the browser is at %s, want /", loc)
	}

	if resp := btSubmit(t, ctx, `click "New workbench"`, chromedp.Click(chromedp.CSS(`[data-testid=new-workbench]`))); resp.Status != http.StatusOK {
		t.Fatalf("launch page: status %d at %s", resp.Status, resp.URL)
	}
	btDo(t, ctx, "fill the launch form",
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=launch-form]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=image-choice] input[name=image][value="fake"]`)),
		chromedp.Click(chromedp.CSS(`[data-testid=flavor-choice] input[name=flavor][value="CPU small"]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "browser-exp"),
	)
	// The radios are clicked, not pre-checked: make sure the clicks took.
	for _, sel := range []string{`input[name=image][value="fake"]`, `input[name=flavor][value="CPU small"]`} {
		checked, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector(`+btJsString(sel)+`).checked`))
		if err != nil || !checked {
			t.Fatalf("radio %s not checked after the click (%v)", sel, err)
		}
	}
	resp := btSubmit(t, ctx, "submit the launch form", chromedp.Click(chromedp.CSS(`[data-testid=launch-submit]`)))
	if resp.Status != http.StatusOK {
		t.Fatalf("launch: status %d at %s", resp.Status, resp.URL)
	}
	wbPath := btLocation(t, ctx).Path
	if !strings.HasPrefix(wbPath, "/workbenches/") || wbPath == "/workbenches/new" {
		t.Fatalf("after launching the browser is at %s, want the workbench page", wbPath)
	}

	// The page updates itself (SSE, then a reload on each state change), so
	// the test only reads the badge. Reads fail harmlessly while a reload
	// replaces the document, hence errors are retried, not fatal.
	state, seen := btWaitWorkbenchState(t, ctx, "running", 60*time.Second)
	if state != "running" {
		t.Fatalf("the workbench page shows %q after 60 s (states seen: %v), want running", state, seen)
	}
	t.Logf("states shown by the page: %v", seen)
	// The page reloads to show the new state; its live region then says
	// it, so a screen reader hears the launch finish.
	if said := btAnnounced(t, ctx, 30*time.Second); said != "browser-exp: running" {
		t.Errorf("the live region says %q, want %q", said, "browser-exp: running")
	}
	btDo(t, ctx, "wait for Open JupyterLab", chromedp.WaitVisible(chromedp.CSS(`[data-testid=open-jupyter]`)))
	// Read the page only now: while launching it reloads itself, and a
	// read during a reload fails.
	if name := btText(t, ctx, `[data-testid=wb-name]`); name != "browser-exp" {
		t.Errorf("workbench page names %q, want browser-exp", name)
	}
	btScreenshot(t, ctx, "workbench-running.png")

	// The link opens a new tab (target=_blank); following its href in this
	// tab exercises the same proxied URL without juggling targets.
	href, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(`[data-testid=open-jupyter]`), "href"))
	if err != nil || !href.Exists || href.Value == "" {
		t.Fatalf("Open JupyterLab has no href (%v)", err)
	}
	if tgt, _ := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(`[data-testid=open-jupyter]`), "target")); tgt.Value != "_blank" {
		t.Errorf("Open JupyterLab target %q, want _blank", tgt.Value)
	}
	base, _ := url.Parse(p.ts.URL)
	ref, err := url.Parse(href.Value)
	if err != nil {
		t.Fatalf("Open JupyterLab href %q: %v", href.Value, err)
	}
	lab := base.ResolveReference(ref)
	if lab.Host != base.Host || !strings.HasPrefix(lab.Path, "/wb/") {
		t.Fatalf("Open JupyterLab points at %s, want a /wb/ path on the portal %s", lab, base.Host)
	}
	if resp := btNavigate(t, ctx, lab.String()); resp.Status != http.StatusOK {
		t.Fatalf("GET %s through the proxy: status %d", lab, resp.Status)
	}
	btDo(t, ctx, "wait for the notebook page", chromedp.WaitVisible(chromedp.CSS(`h1`)))
	if h := btText(t, ctx, `h1`); h != "Fake JupyterLab" {
		t.Fatalf("page through the proxy shows %q, want Fake JupyterLab", h)
	}
	if title, _ := chromedp.Run(ctx, chromedp.Title()); title != "Fake JupyterLab" {
		t.Errorf("title through the proxy %q, want Fake JupyterLab", title)
	}
	if loc := btLocation(t, ctx); loc.Host != base.Host || !strings.HasPrefix(loc.Path, "/wb/") {
		t.Errorf("the notebook was not served through the portal: browser at %s", loc)
	}
	btScreenshot(t, ctx, "jupyter-through-proxy.png")
}

// btWaitWorkbenchState reads the workbench page's state badge until it says
// want, the page shows "failed", or limit passes; it returns the last state
// read and the distinct states seen, in order.
func btWaitWorkbenchState(t *testing.T, ctx context.Context, want string, limit time.Duration) (string, []string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	var seen []string
	last := ""
	for time.Now().Before(deadline) && ctx.Err() == nil {
		// A short per-read bound: a read issued mid-reload may otherwise wait
		// for a document that is being torn down.
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		// The badge is what the person sees (the script updates it in place);
		// "rendered" is the state the server rendered into a fully loaded
		// page. Only the latter ends the wait: with JavaScript on, the badge
		// shows the new state a moment before the script reloads the page,
		// and acting then (a click, a screenshot) races the reload.
		got, err := chromedp.Run(rctx, chromedp.Evaluate[[]string](
			`(() => { const e = document.querySelector("[data-testid=wb-state]");
			          const st = document.querySelector("[data-testid=wb-status]");
			          const rendered = (document.readyState === "complete" && st) ? st.getAttribute("data-state") : "";
			          return [e ? e.innerText.trim() : "", rendered || ""]; })()`))
		cancel()
		s, rendered := "", ""
		if err == nil && len(got) == 2 {
			s, rendered = got[0], got[1]
		}
		if s != "" {
			last = s
			if len(seen) == 0 || seen[len(seen)-1] != s {
				seen = append(seen, s)
			}
			if s == want && rendered == want {
				return s, seen
			}
			if s == "failed" {
				reason, _ := chromedp.Run(ctx, chromedp.Evaluate[string](
					`(() => { const e = document.querySelector("[data-testid=wb-reason]"); return e ? e.innerText : ""; })()`))
				t.Fatalf("the workbench failed: %s", reason)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return last, seen
}
