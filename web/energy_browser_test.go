package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// In the browser: an admin sets the electricity price on the billing page
// (sudo confirmed), the energy cost column appears; the utilisation
// dashboard draws its chart and switches to weeks with the form.
func TestBrowserElectricityPriceAndUtilisation(t *testing.T) {
	p := newPortal(t)
	energyFixture(t, p, 3_600_000_000) // 1 kWh on ada's workbench this month
	ctx := btNewBrowser(t)
	btLoginAsAdmin(t, ctx, p.ts.URL)
	if resp := btNavigate(t, ctx, p.ts.URL+"/admin/billing?group_by=workbench"); resp.Status != http.StatusOK {
		t.Fatalf("GET /admin/billing: %d", resp.Status)
	}
	if kwh := btText(t, ctx, `[data-testid=billing-row][data-key="ada/llm-train"] [data-testid=billing-kwh]`); kwh != "1.000" {
		t.Fatalf("kWh before a price: %q", kwh)
	}
	btDo(t, ctx, "type a price", chromedp.SendKeys(chromedp.CSS(`[data-testid=electricity-input]`), "0.20"))
	resp := btSubmit(t, ctx, "save the price", chromedp.Click(chromedp.CSS(`[data-testid=electricity-submit]`)))
	resp = btConfirmSudo(t, ctx, resp, btAdminPassword)
	if resp.Status != http.StatusOK {
		t.Fatalf("save price: %d", resp.Status)
	}
	if msg := btText(t, ctx, `[data-testid=electricity-done]`); !strings.Contains(msg, "saved") {
		t.Fatalf("no confirmation: %q", msg)
	}
	btNavigate(t, ctx, p.ts.URL+"/admin/billing?group_by=workbench")
	if c := btText(t, ctx, `[data-testid=billing-row][data-key="ada/llm-train"] [data-testid=billing-energy-cost]`); c != "0.20 USD" {
		t.Errorf("energy cost %q, want 0.20 USD", c)
	}
	btScreenshot(t, ctx, "admin-billing-energy.png")

	btNavigate(t, ctx, p.ts.URL+"/admin/utilisation")
	btDo(t, ctx, "wait for the chart", chromedp.WaitVisible(chromedp.CSS(`[data-testid=utilisation-chart]`)))
	btDo(t, ctx, "choose weeks", chromedp.SetValue(chromedp.CSS(`[data-testid=utilisation-bucket]`), "week"))
	if resp := btSubmit(t, ctx, "show weeks", chromedp.Click(chromedp.CSS(`[data-testid=utilisation-filter] button`))); resp.Status != http.StatusOK {
		t.Fatalf("weeks: %d", resp.Status)
	}
	if bars := btTexts(t, ctx, `[data-testid=utilisation-buckets] [data-testid=utilisation-row]`); len(bars) < 5 || len(bars) > 6 {
		t.Errorf("%d week rows for 30 days, want 5 or 6", len(bars))
	}
	btScreenshot(t, ctx, "admin-utilisation.png")
}
