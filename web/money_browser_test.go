package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// An admin edits a user's GPU quota inline in the quota console — a bad
// value first, which comes back beside the field — and the user then sees
// the new limit on their Usage page's GPU bar.
func TestBrowserQuotaConsoleToUsageBar(t *testing.T) {
	p := newPortal(t)
	ctx0 := context.Background()
	ada, err := p.srv.Store.CreateUser(ctx0, models.NewUser{Username: "ada", Password: "ada-password", Role: "user"})
	if err != nil {
		t.Fatalf("create ada: %v", err)
	}
	month := models.MonthStart(time.Now())
	mpSeedLines(t, p, ada.ID, "", month, 3_500_000, 3_500_000, 1_234_567)
	ctx := btNewBrowser(t)
	btLoginAsAdmin(t, ctx, p.ts.URL)

	const row = `[data-testid=quota-row][data-name=ada]`
	const input = row + ` input[name=max_gpus]`
	if resp := btNavigate(t, ctx, p.ts.URL+"/admin/quotas"); resp.Status != http.StatusOK {
		t.Fatalf("GET /admin/quotas: status %d", resp.Status)
	}
	btDo(t, ctx, "type a bad GPU limit",
		chromedp.WaitVisible(chromedp.CSS(input)),
		chromedp.Clear(chromedp.CSS(input)),
		chromedp.SendKeys(chromedp.CSS(input), "lots"),
	)
	resp := btSubmit(t, ctx, "save the bad value", chromedp.Click(chromedp.CSS(row+` [data-testid=quota-save]`)))
	resp = btConfirmSudo(t, ctx, resp, btAdminPassword) // the form is posted again, unchanged
	if resp.Status != http.StatusBadRequest {
		t.Errorf("bad GPU limit: status %d, want 400", resp.Status)
	}
	btDo(t, ctx, "wait for the field error", chromedp.WaitVisible(chromedp.CSS(row+` [data-testid=error-max_gpus]`)))
	if msg := btText(t, ctx, row+` [data-testid=error-max_gpus]`); !strings.Contains(msg, "whole number") {
		t.Errorf("error beside max_gpus: %q", msg)
	}
	if got, _ := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(input))); got != "lots" {
		t.Errorf("the typed value is not kept: %q", got)
	}

	btDo(t, ctx, "type a good GPU limit and a budget",
		chromedp.Clear(chromedp.CSS(input)),
		chromedp.SendKeys(chromedp.CSS(input), "5"),
		chromedp.Clear(chromedp.CSS(row+` input[name=budget]`)),
		chromedp.SendKeys(chromedp.CSS(row+` input[name=budget]`), "10"),
	)
	resp = btSubmit(t, ctx, "save the GPU limit", chromedp.Click(chromedp.CSS(row+` [data-testid=quota-save]`)))
	if resp.Status != http.StatusOK {
		t.Fatalf("save: status %d at %s", resp.Status, resp.URL)
	}
	if loc := btLocation(t, ctx); loc.Path != "/admin/quotas" {
		t.Errorf("after saving the browser is at %s, want /admin/quotas", loc)
	}
	if f := btText(t, ctx, `[data-testid=flash]`); !strings.Contains(f, "ada") {
		t.Errorf("flash %q", f)
	}
	limit, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(row+` [data-testid=quota-bar-gpus]`), "data-limit"))
	if err != nil || limit.Value != "5" {
		t.Errorf("console GPU bar limit %q (%v), want 5", limit.Value, err)
	}
	if n := len(btTexts(t, ctx, `[data-testid^=error-]`)); n != 0 {
		t.Errorf("%d field errors remain after a good save", n)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(window.scrollTo(0, 0), true)`)); err != nil { // the redirect's #anchor scrolled
		t.Errorf("scroll to the top: %v", err)
	}
	btScreenshot(t, ctx, "admin-quotas.png")

	btSubmit(t, ctx, "log out", chromedp.Click(chromedp.CSS(`.account form[action="/logout"] button`)))
	btNavigate(t, ctx, p.ts.URL+"/login")
	if resp := btLogin(t, ctx, "ada", "ada-password"); resp.Status != http.StatusOK {
		t.Fatalf("ada login: status %d", resp.Status)
	}
	btSubmit(t, ctx, "open Usage from the navigation", chromedp.Click(chromedp.CSS(`nav.mainnav a[href="/usage"]`)))
	btDo(t, ctx, "wait for the quota bars", chromedp.WaitVisible(chromedp.CSS(`[data-testid=quota-bar-gpus]`)))
	limit, err = chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(`[data-testid=quota-bar-gpus]`), "data-limit"))
	if err != nil || limit.Value != "5" {
		t.Errorf("ada's GPU bar limit %q (%v), want 5", limit.Value, err)
	}
	if fig := btText(t, ctx, `[data-testid=quota-bar-gpus] [data-testid=quota-figures]`); fig != "0 / 5" {
		t.Errorf("ada's GPU bar reads %q, want 0 / 5", fig)
	}
	if !btVisible(t, ctx, `[data-testid=quota-bar-gpus] progress`) {
		t.Error("the GPU bar is not drawn")
	}
	// 8.23 of a 10.00 budget: past 80%, so the bar and a banner warn.
	if cls, _ := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(`[data-testid=quota-bar-spend]`), "class")); !strings.Contains(cls.Value, "level-warn") {
		t.Errorf("spend bar class %q, want level-warn", cls.Value)
	}
	if w := btText(t, ctx, `[data-testid=quota-warning]`); !strings.Contains(w, "80%") {
		t.Errorf("budget warning %q", w)
	}
	if rows := btTexts(t, ctx, `[data-testid=statement-row]`); len(rows) != 3 {
		t.Errorf("statement rows %d, want 3", len(rows))
	}
	if tot := btText(t, ctx, `[data-testid=statement-total]`); tot != "8.23 USD" {
		t.Errorf("statement total %q", tot)
	}
	btScreenshot(t, ctx, "usage.png")
}
