package web_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// A user whose monthly budget is used up fills the pool page's booking
// form and clicks Book: the refusal is said in the form, above its fields,
// where the person is looking when the answer loads (not at the top of a
// long page, the form out of sight), and everything typed is still there.
// Nothing is booked. With JavaScript on and off.
func TestBrowserBookingRefusedWithTheBudgetUsedUp(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) { testBookingBudgetRefused(t, js) })
	}
}

func testBookingBudgetRefused(t *testing.T, js bool) {
	p := newPortal(t)
	danaToken := tokenFor(t, p, "dana", "user")
	root := tokenFor(t, p, "admin", "admin")
	if code, out := p.api("PUT", "/api/v1/admin/quotas/users/dana", root, `{"budget_per_month_micros": 0}`); code != http.StatusOK {
		t.Fatalf("dana's budget: %d %v", code, out)
	}
	ctx := btNewBrowser(t)
	if !js {
		btDo(t, ctx, "disable JavaScript", btScriptsOff())
	}
	btNavigate(t, ctx, p.ts.URL+"/login")
	if resp := btLogin(t, ctx, "dana", "dana-password"); resp.Status != http.StatusOK {
		t.Fatalf("dana's login: %d", resp.Status)
	}
	btNavigate(t, ctx, p.ts.URL+"/gpus")

	now := time.Now().UTC()
	next := time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC)
	start := now.Truncate(time.Minute) // this month: a window begun starts now
	const layout = "2006-01-02T15:04"
	form := `[data-testid=booking-form] `
	btDo(t, ctx, "fill the booking form",
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=booking-form]`)),
		chromedp.SetValue(chromedp.CSS(form+`select[name=pool]`), resvH100),
		chromedp.SetValue(chromedp.CSS(form+`input[name=units]`), "1"),
		chromedp.SetValue(chromedp.CSS(form+`input[name=starts_at]`), start.Format(layout)),
		chromedp.SetValue(chromedp.CSS(form+`input[name=ends_at]`), start.Add(time.Hour).Format(layout)),
		chromedp.SendKeys(chromedp.CSS(form+`input[name=note]`), "thesis"),
	)
	resp := btSubmit(t, ctx, "click Book", chromedp.Click(chromedp.CSS(`[data-testid=booking-submit]`)))
	if resp.Status != http.StatusUnprocessableEntity {
		t.Fatalf("booking with the budget used up: status %d, want 422", resp.Status)
	}
	btDo(t, ctx, "wait for the refusal", chromedp.WaitVisible(chromedp.CSS(form+`[data-testid=booking-error]`)))
	msg := btText(t, ctx, form+`[data-testid=booking-error]`)
	if !strings.Contains(msg, "budget is used up") || !strings.Contains(msg, "book from then") || !strings.Contains(msg, next.Format("2006-01-02 15:04 UTC")) {
		t.Fatalf("the refusal reads %q", msg)
	}
	// The refusal is in sight as the page loads: the person does not look
	// for it under the GPU table.
	seen, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
		const r = document.querySelector("[data-testid=booking-error]").getBoundingClientRect();
		return [Math.round(r.top), Math.round(r.bottom), window.innerHeight].join(" "); })()`))
	if err != nil {
		t.Fatal(err)
	}
	var top, bottom, height int
	if _, err := fmt.Sscan(seen, &top, &bottom, &height); err != nil || top < 0 || bottom > height {
		t.Errorf("the refusal is out of sight when the page loads (top, bottom, window height: %s)", seen)
	}
	kept, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("[data-testid=booking-form] input:not([type=hidden]), [data-testid=booking-form] select")].map(e => e.name + "=" + e.value).join(" ")`))
	if want := "pool=" + resvH100 + " units=1 starts_at=" + start.Format(layout) + " ends_at=" + start.Add(time.Hour).Format(layout) + " note=thesis"; err != nil || kept != want {
		t.Fatalf("the form after the refusal: %q (%v), want %q", kept, err, want)
	}
	btScreenshot(t, ctx, "booking-budget-refused-"+jsName(js)+".png")
	if code, out := p.api("GET", "/api/v1/reservations", danaToken, ""); code != http.StatusOK || len(out["items"].([]any)) != 0 {
		t.Fatalf("dana's bookings after the refusal: %d %v", code, out)
	}
}
