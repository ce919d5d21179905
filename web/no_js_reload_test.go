package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/chromedp/chromedp"
)

// noscriptDoc is what a browser without JavaScript reads of the page's
// <noscript> blocks (an HTML parser with scripting on keeps them as text).
func noscriptDoc(t *testing.T, body string) *goquery.Document {
	t.Helper()
	var b strings.Builder
	mustDoc(t, body).Find("noscript").Each(func(_ int, s *goquery.Selection) { b.WriteString(s.Text()) })
	return mustDoc(t, b.String())
}

// checkNoJSReload checks what a browser without JavaScript reads of page
// (load returns its noscript blocks) while what it shows is on its way: a
// reload every 10 s, said, with "Reload now" and "Stop reloading"; with
// ?reload=off none, said, with "Reload automatically". what names the page
// in failures.
func checkNoJSReload(t *testing.T, load func(string) *goquery.Document, page, what string) {
	t.Helper()
	doc := load(page)
	meta := doc.Find(`meta[http-equiv=refresh]`)
	if meta.Length() != 1 || attrOf(meta, "content") != "10" {
		t.Errorf("%s without JavaScript: refresh %q (%d), want every 10 s", what, attrOf(meta, "content"), meta.Length())
	}
	if got := doc.Find(`[data-testid=no-js-reload]`).Text(); !strings.Contains(got, "every 10 seconds") {
		t.Errorf("the page does not say it reloads: %q", got)
	}
	if href := attrOf(doc.Find(`[data-testid=reload-now]`), "href"); href != page {
		t.Errorf("Reload now: %q, want %q", href, page)
	}
	off := attrOf(doc.Find(`[data-testid=reload-off]`), "href")
	if off != page+"?reload=off" {
		t.Fatalf("Stop reloading: %q, want %q", off, page+"?reload=off")
	}

	doc = load(off)
	if n := doc.Find(`meta[http-equiv=refresh]`).Length(); n != 0 {
		t.Errorf("after Stop reloading the page still reloads itself (%d meta refresh)", n)
	}
	if got := doc.Find(`[data-testid=no-js-reload]`).Text(); !strings.Contains(got, "Automatic reload is off") {
		t.Errorf("the page does not say its reload is off: %q", got)
	}
	if href := attrOf(doc.Find(`[data-testid=reload-now]`), "href"); href != off {
		t.Errorf("Reload now with the reload off: %q, want %q (it stays off)", href, off)
	}
	if href := attrOf(doc.Find(`[data-testid=reload-on]`), "href"); href != page {
		t.Errorf("Reload automatically: %q, want %q", href, page)
	}
}

// Without JavaScript, a workbench on its way somewhere reloads its page
// itself, and a screen reader starts reading the page again at each
// reload. It was every 2 s, with no word of it and no way to stop it: now
// every 10 s, said on the page, with "Reload now" and "Stop reloading"
// (?reload=off, which the page's own links keep until "Reload
// automatically"). A running workbench's page does not reload.
func TestNoJSWorkbenchPageReloadsSlowlyAndCanStop(t *testing.T) {
	r := newA11yRig(t)
	p := r.p
	c := p.client()
	p.login(c, "alice", "alice-password")
	page := "/workbenches/" + r.pull.ID
	load := func(path string) *goquery.Document {
		t.Helper()
		res, body := p.get(c, path)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", path, res.StatusCode)
		}
		return noscriptDoc(t, body)
	}

	checkNoJSReload(t, load, page, "a pulling workbench's page")

	// Settled: nothing reloads, nothing is said.
	doc := load("/workbenches/" + r.running.ID)
	if n := doc.Find(`meta[http-equiv=refresh], [data-testid=no-js-reload]`).Length(); n != 0 {
		t.Errorf("a running workbench's page reloads itself without JavaScript (%d)", n)
	}
}

// In Chromium without JavaScript, a person on a pulling workbench's page
// clicks "Stop reloading": the page stays put (no meta refresh left, the
// words say so), and "Reload automatically" brings the reload back.
func TestBrowserNoJSStopReloading(t *testing.T) {
	r := newA11yRig(t)
	page := "/workbenches/" + r.pull.ID
	b := btNewBrowser(t)
	btDo(t, b, "disable JavaScript", btScriptsOff())
	btNavigate(t, b, r.p.ts.URL+"/login")
	if resp := btLogin(t, b, "alice", "alice-password"); resp.Status != http.StatusOK {
		t.Fatalf("login: %d", resp.Status)
	}
	btNavigate(t, b, r.p.ts.URL+page)
	btNoJSStopReloading(t, b, page, "the pulling workbench's page")
}

// btNoJSStopReloading, in a tab without JavaScript at page (a path) while
// what it shows is on its way, clicks "Stop reloading" and checks that the
// page stays put (no meta refresh left, the words say so), then clicks
// "Reload automatically" and checks that the reload is back. what names the
// page in failures.
func btNoJSStopReloading(t *testing.T, b context.Context, page, what string) {
	t.Helper()
	refreshes := func() string {
		t.Helper()
		n, err := chromedp.Run(b, chromedp.Evaluate[string](`String(document.querySelectorAll("meta[http-equiv=refresh]").length)`))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := refreshes(); n != "1" {
		t.Fatalf("%s has %s meta refresh, want 1", what, n)
	}
	every, err := chromedp.Run(b, chromedp.Evaluate[string](`document.querySelector("meta[http-equiv=refresh]").content`))
	if err != nil || every != "10" {
		t.Errorf("%s reloads every %q s (%v), want 10", what, every, err)
	}
	// Not a click on a link that is not there: that waits out the test.
	if has, err := chromedp.Run(b, chromedp.Evaluate[bool](`document.querySelector("[data-testid=reload-off]") !== null`)); err != nil || !has {
		t.Fatalf("%s has no Stop reloading (%v)", what, err)
	}
	btSubmit(t, b, "Stop reloading", chromedp.Click(chromedp.CSS(`[data-testid=reload-off]`)))
	if loc := btLocation(t, b); loc.Path != page || loc.RawQuery != "reload=off" {
		t.Errorf("after Stop reloading the browser is at %s", loc)
	}
	if n := refreshes(); n != "0" {
		t.Errorf("after Stop reloading the page has %s meta refresh, want none", n)
	}
	if got := btText(t, b, `[data-testid=no-js-reload]`); !strings.Contains(got, "Automatic reload is off") {
		t.Errorf("the page says %q, want that its reload is off", got)
	}
	btSubmit(t, b, "Reload automatically", chromedp.Click(chromedp.CSS(`[data-testid=reload-on]`)))
	if loc := btLocation(t, b); loc.Path != page || loc.RawQuery != "" {
		t.Errorf("after Reload automatically the browser is at %s", loc)
	}
	if n := refreshes(); n != "1" {
		t.Errorf("after Reload automatically the page has %s meta refresh, want 1", n)
	}
}
