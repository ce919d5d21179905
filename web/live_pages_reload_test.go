package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/chromedp/chromedp"

	"workbench/internal/testsupport/testimages"
	"workbench/models"
)

// The pages besides the owner's workbench page that follow something on
// its way: an image test's result, the catalog during a pre-pull, and an
// administrator's view of someone's workbench. Without JavaScript they
// reload as the workbench page does (every 10 s, said, stoppable with
// ?reload=off); with JavaScript they change in place. The image test's
// page reloaded itself every 2 s even with JavaScript.

// noJSLoader returns what a browser without JavaScript reads of a page
// (its noscript blocks), fetched by c.
func noJSLoader(t *testing.T, p *testPortal, c *http.Client) func(string) *goquery.Document {
	return func(path string) *goquery.Document {
		t.Helper()
		res, body := p.get(c, path)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", path, res.StatusCode)
		}
		return noscriptDoc(t, body)
	}
}

// runningImageTest records a running test of a catalog image (the store's
// row only: nothing runs) and returns the image and the test.
func runningImageTest(t *testing.T, p *testPortal) (*models.Image, *models.ImageCheck) {
	t.Helper()
	ctx := context.Background()
	img := &models.Image{Name: "t-live", Image: "workbench-test/live:1", StartCommand: testimages.FakeJupyterStartCommand,
		RunAsUser: "1000", HomePath: testimages.FakeJupyterHome, Enabled: true}
	if err := p.srv.Store.CreateImage(ctx, img); err != nil {
		t.Fatal(err)
	}
	chk, err := p.srv.Store.CreateImageCheck(ctx, img.ID, "admin")
	if err != nil {
		t.Fatal(err)
	}
	return img, chk
}

// A running image test's page: no reload at all with JavaScript (no meta
// refresh outside noscript; its result is a live region of the page's own
// address), a slow stoppable one without; once done, neither.
func TestNoJSImageTestPageReloadsSlowlyAndCanStop(t *testing.T) {
	p := newPortal(t)
	c := p.client()
	p.login(c, "admin", adminPassword)
	img, chk := runningImageTest(t, p)
	page := "/admin/images/" + itoa(img.ID) + "/tests/" + itoa(chk.ID)

	_, body := p.get(c, page)
	doc := parseHTML(t, body)
	if n := doc.Find(`meta[http-equiv=refresh]`).Length(); n != 0 {
		t.Errorf("a running test's page reloads itself with JavaScript too (%d meta refresh outside noscript)", n)
	}
	if live := attrOf(doc.Find(`#image-test-live`), "data-live"); live != page {
		t.Errorf("the running test's result is not live (data-live %q, want %q)", live, page)
	}
	checkNoJSReload(t, noJSLoader(t, p, c), page, "a running image test's page")

	if err := p.srv.Store.FinishImageCheck(context.Background(), chk.ID, models.CheckPassed, "", "All checks passed.", ""); err != nil {
		t.Fatal(err)
	}
	_, body = p.get(c, page)
	doc = parseHTML(t, body)
	if _, live := doc.Find(`#image-test-live`).Attr("data-live"); live || doc.Find(`#image-test-live`).Length() != 1 {
		t.Errorf("a finished test's result is still live (or gone): %d regions", doc.Find(`#image-test-live`).Length())
	}
	if got := attrOf(doc.Find(`[data-testid=image-test]`), "data-state"); got != "passed" {
		t.Errorf("finished test shown as %q", got)
	}
	if n := noscriptDoc(t, body).Find(`meta[http-equiv=refresh], [data-testid=no-js-reload]`).Length(); n != 0 {
		t.Errorf("a finished test's page reloads itself without JavaScript (%d)", n)
	}
}

// In Chromium with JavaScript, the running test's page stays the same
// document while it waits (no reload: the scroll, the focus and a screen
// reader's place are kept) and shows the result in place when the test
// ends, said in the announcer; then it stops asking.
func TestBrowserImageTestPageFollowsTheTestInPlace(t *testing.T) {
	p, b := btAdminIn(t, true)
	img, chk := runningImageTest(t, p)
	btNavigate(t, b, p.ts.URL+"/admin/images/"+itoa(img.ID)+"/tests/"+itoa(chk.ID))
	if got := btText(t, b, `[data-testid=image-test-message]`); !strings.Contains(got, "Testing") {
		t.Fatalf("the running test's page says %q", got)
	}
	if _, err := chromedp.Run(b, chromedp.Evaluate[bool](`window.sameDocument = true`)); err != nil {
		t.Fatal(err)
	}
	// Two looks while it still runs: a reload would have come by now.
	waitTicks := `new Promise((res) => {
		const end = Date.now() + 180000;
		const look = () => {
			const r = document.getElementById("image-test-live");
			const n = r ? parseInt(r.getAttribute("data-live-ticks") || "0", 10) : -1;
			if (n >= 2 || Date.now() > end) res(n); else setTimeout(look, 100);
		};
		look();
	})`
	if n, err := chromedp.Run(b, chromedp.Evaluate[int](waitTicks, chromedp.EvalAwaitPromise)); err != nil || n < 2 {
		t.Fatalf("the running test's result was not looked at again (%d looks, %v)", n, err)
	}
	if same, err := chromedp.Run(b, chromedp.Evaluate[bool](`window.sameDocument === true`)); err != nil || !same {
		t.Fatalf("the page reloaded while the test ran (%v)", err)
	}

	if err := p.srv.Store.FinishImageCheck(context.Background(), chk.ID, models.CheckPassed, "", "All checks passed.", ""); err != nil {
		t.Fatal(err)
	}
	waitDone := `new Promise((res) => {
		const end = Date.now() + 180000;
		const look = () => {
			const s = document.querySelector("[data-testid=image-test]");
			const st = s ? s.getAttribute("data-state") : "none";
			if (st !== "running" || Date.now() > end) res(st); else setTimeout(look, 100);
		};
		look();
	})`
	if st, err := chromedp.Run(b, chromedp.Evaluate[string](waitDone, chromedp.EvalAwaitPromise)); err != nil || st != "passed" {
		t.Fatalf("the page shows the test as %q after it passed (%v)", st, err)
	}
	if same, err := chromedp.Run(b, chromedp.Evaluate[bool](`window.sameDocument === true`)); err != nil || !same {
		t.Errorf("the page reloaded to show the result (%v)", err)
	}
	if got := btText(t, b, `[data-testid=image-test-message]`); !strings.Contains(got, "All checks passed") {
		t.Errorf("the result says %q", got)
	}
	if got := btText(t, b, `[data-testid=announcer]`); !strings.Contains(got, "All checks passed") {
		t.Errorf("the announcer says %q, want the result", got)
	}
	// Done: the region no longer asks.
	ticks := `parseInt(document.getElementById("image-test-live").getAttribute("data-live-ticks") || "0", 10)`
	before, _ := chromedp.Run(b, chromedp.Evaluate[int](ticks))
	time.Sleep(4500 * time.Millisecond)
	if after, err := chromedp.Run(b, chromedp.Evaluate[int](ticks)); err != nil || after != before {
		t.Errorf("the finished test's page still asks: %d looks, then %d (%v)", before, after, err)
	}
}

// In Chromium without JavaScript, the running test's page reloads every
// 10 s and Stop reloading stops it.
func TestBrowserNoJSImageTestStopReloading(t *testing.T) {
	p, b := btAdminIn(t, false)
	img, chk := runningImageTest(t, p)
	page := "/admin/images/" + itoa(img.ID) + "/tests/" + itoa(chk.ID)
	btNavigate(t, b, p.ts.URL+page)
	btNoJSStopReloading(t, b, page, "the running image test's page")
}

// pullingWorkbenchOfBob gives bob a workbench that is pulling its image
// (the store's row only) and returns its page's address.
func pullingWorkbenchOfBob(t *testing.T, p *testPortal) string {
	t.Helper()
	ctx := context.Background()
	tokenFor(t, p, "bob", "user")
	bob, _ := p.srv.Store.UserByUsername(ctx, "bob")
	wb := p.runningRecord(bob, "thesis", models.GPUNeed{})
	if err := p.srv.Store.SetWorkbenchState(ctx, wb.ID, "pulling", 40, "", nil); err != nil {
		t.Fatal(err)
	}
	return "/workbenches/" + wb.ID
}

// An administrator's view of bob's pulling workbench reloads as bob's own
// page does without JavaScript (it was every 5 s, without a word); of a
// running one, not at all.
func TestNoJSAdminWorkbenchPageReloadsSlowlyAndCanStop(t *testing.T) {
	p := newPortal(t)
	c := p.client()
	p.login(c, "admin", adminPassword)
	page := pullingWorkbenchOfBob(t, p)
	load := noJSLoader(t, p, c)
	if _, body := p.get(c, page); parseHTML(t, body).Find(`[data-testid=admin-view-banner]`).Length() != 1 {
		t.Fatal("not the administrator's view")
	}
	checkNoJSReload(t, load, page, "an administrator's view of a pulling workbench")

	bob, _ := p.srv.Store.UserByUsername(context.Background(), "bob")
	running := p.runningRecord(bob, "settled", models.GPUNeed{})
	if n := load("/workbenches/" + running.ID).Find(`meta[http-equiv=refresh], [data-testid=no-js-reload]`).Length(); n != 0 {
		t.Errorf("an administrator's view of a running workbench reloads itself without JavaScript (%d)", n)
	}
}

// In Chromium without JavaScript, Stop reloading on the administrator's
// view of a pulling workbench stops its reload.
func TestBrowserNoJSAdminWorkbenchStopReloading(t *testing.T) {
	p, b := btAdminIn(t, false)
	page := pullingWorkbenchOfBob(t, p)
	btNavigate(t, b, p.ts.URL+page)
	btNoJSStopReloading(t, b, page, "the administrator's view of a pulling workbench")
}

// startPrePull pre-pulls the "pullable" image as admin would from the
// catalog, its registry holding every blob until the returned release is
// called (at the latest when the test ends): the pull stays in progress
// however slow the machine, where a per-blob delay was a timer load could
// outrun.
func startPrePull(t *testing.T, p *testPortal) (release func()) {
	t.Helper()
	reg := servePullable(t, p, 0)
	reg.Hold()
	ctx := context.Background()
	img, err := p.srv.Store.ImageByNameOrID(ctx, "pullable")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Manager.PrePull(ctx, img, "admin"); err != nil {
		reg.Release()
		t.Fatal(err)
	}
	t.Cleanup(p.srv.Manager.Wait)
	t.Cleanup(reg.Release) // first (cleanups run last-in first-out): the pull can end
	return reg.Release
}

// The catalog during a pre-pull reloads slowly and stoppably without
// JavaScript (it was every 3 s, without a word); once the pull is done,
// not at all.
func TestNoJSCatalogDuringPullReloadsSlowlyAndCanStop(t *testing.T) {
	p := newPortal(t)
	c := p.client()
	p.login(c, "admin", adminPassword)
	release := startPrePull(t, p)
	load := noJSLoader(t, p, c)
	checkNoJSReload(t, load, "/catalog", "the catalog during a pull")
	release()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if pr, _ := catalogCard(t, p, c, "pullable").Find(`[data-testid=image-presence]`).Attr("data-presence"); pr == "present" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the pull did not finish")
		}
	}
	if n := load("/catalog").Find(`meta[http-equiv=refresh], [data-testid=no-js-reload]`).Length(); n != 0 {
		t.Errorf("the catalog reloads itself without JavaScript after the pull (%d)", n)
	}
}

// In Chromium with JavaScript, the catalog follows a pull without a
// reload, shows the image present at its end, and then stops asking.
func TestBrowserCatalogFollowsThePullInPlace(t *testing.T) {
	p, b := btAdminIn(t, true)
	release := startPrePull(t, p)
	btNavigate(t, b, p.ts.URL+"/catalog")
	if _, err := chromedp.Run(b, chromedp.Evaluate[bool](`window.sameDocument = true`)); err != nil {
		t.Fatal(err)
	}
	// Two looks while the pull is held in progress: a reload would have
	// come by now.
	ticks := `parseInt(document.getElementById("image-cards").getAttribute("data-live-ticks") || "0", 10)`
	waitLooks := `new Promise((res) => {
		const end = Date.now() + 180000;
		const look = () => {
			const n = ` + ticks + `;
			if (n >= 2 || Date.now() > end) res(n); else setTimeout(look, 100);
		};
		look();
	})`
	if n, err := chromedp.Run(b, chromedp.Evaluate[int](waitLooks, chromedp.EvalAwaitPromise)); err != nil || n < 2 {
		t.Fatalf("the cards were not looked at again during the pull (%d looks, %v)", n, err)
	}
	release()
	waitPresent := `new Promise((res) => {
		const end = Date.now() + 180000;
		const look = () => {
			let pr = "none";
			document.querySelectorAll("[data-testid=image-card]").forEach((c) => {
				const h = c.querySelector("h3");
				const p = c.querySelector("[data-testid=image-presence]");
				if (h && h.textContent.includes("pullable") && p) pr = p.getAttribute("data-presence");
			});
			if (pr === "present" || Date.now() > end) res(pr); else setTimeout(look, 100);
		};
		look();
	})`
	if pr, err := chromedp.Run(b, chromedp.Evaluate[string](waitPresent, chromedp.EvalAwaitPromise)); err != nil || pr != "present" {
		t.Fatalf("the catalog shows the pulled image as %q (%v)", pr, err)
	}
	if same, err := chromedp.Run(b, chromedp.Evaluate[bool](`window.sameDocument === true`)); err != nil || !same {
		t.Errorf("the catalog reloaded during the pull (%v)", err)
	}
	// The look that brings the cards without data-live (the pull done)
	// ends the asking; then no look comes.
	waitEnd := `new Promise((res) => {
		const end = Date.now() + 180000;
		const look = () => {
			const live = document.getElementById("image-cards").hasAttribute("data-live");
			if (!live || Date.now() > end) res(!live); else setTimeout(look, 100);
		};
		look();
	})`
	if ended, err := chromedp.Run(b, chromedp.Evaluate[bool](waitEnd, chromedp.EvalAwaitPromise)); err != nil || !ended {
		t.Fatalf("the cards still ask after the pull (%v)", err)
	}
	before, _ := chromedp.Run(b, chromedp.Evaluate[int](ticks))
	time.Sleep(4500 * time.Millisecond)
	if after, err := chromedp.Run(b, chromedp.Evaluate[int](ticks)); err != nil || after != before {
		t.Errorf("the catalog still asks after the pull: %d looks, then %d (%v)", before, after, err)
	}
}

// In Chromium without JavaScript, Stop reloading on the catalog during a
// pull stops its reload.
func TestBrowserNoJSCatalogStopReloading(t *testing.T) {
	p, b := btAdminIn(t, false)
	startPrePull(t, p)
	btNavigate(t, b, p.ts.URL+"/catalog")
	btNoJSStopReloading(t, b, "/catalog", "the catalog during a pull")
}
