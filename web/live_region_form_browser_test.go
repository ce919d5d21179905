package web_test

import (
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"
)

// The GPU table refreshes itself every few seconds, but not while an
// admin fills in its "Share…" form: the refresh closed the form, reset
// what was typed (and an error shown with it) and moved focus to the page
// every 5 seconds. Once the form is closed the table refreshes again.
func TestBrowserLiveGPUTableKeepsAnOpenForm(t *testing.T) {
	p, ctx := btAdminIn(t, true)
	btNavigate(t, ctx, p.ts.URL+"/gpus")
	const details = `[data-live] [data-testid=share-details]`
	btDo(t, ctx, "open Share… on the first GPU and type 4 slices",
		chromedp.Click(chromedp.CSS(details+` summary`)),
		chromedp.SetValue(chromedp.CSS(details+` [data-testid=share-slices]`), ""),
		chromedp.SendKeys(chromedp.CSS(details+` [data-testid=share-slices]`), "4"),
		chromedp.Click(chromedp.CSS(`h1`))) // focus leaves the table: the open form alone must hold it
	// waitTicks waits until the region has looked n more times.
	waitTicks := func(n int) {
		t.Helper()
		js := `new Promise((res) => {
			const el = document.querySelector("[data-live]");
			const want = parseInt(el.getAttribute("data-live-ticks") || "0", 10) + ` + strconv.Itoa(n) + `;
			const look = () => parseInt(el.getAttribute("data-live-ticks") || "0", 10) >= want ? res(true) : setTimeout(look, 100);
			look();
		})`
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js, chromedp.EvalAwaitPromise)); err != nil {
			t.Fatal(err)
		}
	}
	waitTicks(2)
	state, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](`[document.querySelector("`+details+`").open, document.querySelector("`+details+` [data-testid=share-slices]").value]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(state) != 2 || state[0] != true || state[1] != "4" {
		t.Fatalf("after two refresh ticks with the form open: open, slices = %v; want true, \"4\"", state)
	}
	btDo(t, ctx, "close the form", chromedp.Click(chromedp.CSS(details+` summary`)), chromedp.Click(chromedp.CSS(`h1`)))
	waitTicks(2)
	slices, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("`+details+` [data-testid=share-slices]").value`))
	if err != nil || slices != "0" {
		t.Errorf("after the form was closed the table did not refresh: slices %q (%v), want the stored 0", slices, err)
	}
}
