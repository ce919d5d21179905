package web_test

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// A posted form's button shows its request is on its way and cannot be
// pressed twice (a Stop took seconds with the button live and the page
// unchanged). The test holds the form back with a submit listener of its
// own, registered after the page's, so the in-flight state stays to be
// read; a GET form (the month picker) is left alone.
func TestBrowserPostedButtonShowsItIsPending(t *testing.T) {
	p, ctx := btAdminIn(t, true)
	btNavigate(t, ctx, p.ts.URL+"/settings/tokens")
	hold := `document.addEventListener("submit", (ev) => ev.preventDefault());`
	holdForms := func() {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[any](hold)); err != nil {
			t.Fatal(err)
		}
	}
	holdForms()
	btDo(t, ctx, "name the token and click Create token",
		chromedp.SendKeys(chromedp.CSS(`form input[name=name]`), "laptop"),
		chromedp.Click(chromedp.CSS(`form button.primary[type=submit]`)))
	state, err := chromedp.Run(ctx, chromedp.Evaluate[[]any](`new Promise((res) => setTimeout(() => {
		const b = document.querySelector("form button.primary[type=submit]");
		res([b.disabled, b.getAttribute("aria-busy"), b.classList.contains("pending")]);
	}, 0))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if len(state) != 3 || state[0] != true || state[1] != "true" || state[2] != true {
		t.Errorf("Create token after the click: disabled, aria-busy, pending = %v; want true, \"true\", true", state)
	}

	btNavigate(t, ctx, p.ts.URL+"/usage")
	holdForms()
	btDo(t, ctx, "click the month picker's Show",
		chromedp.Click(chromedp.CSS(`[data-testid=month-picker] button[type=submit]`)))
	disabled, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`new Promise((res) => setTimeout(() => res(document.querySelector("[data-testid=month-picker] button[type=submit]").disabled), 0))`, chromedp.EvalAwaitPromise))
	if err != nil || disabled {
		t.Errorf("a GET form's button disabled: %v (%v)", disabled, err)
	}
}
