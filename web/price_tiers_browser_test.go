package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// An admin opens Admin → Prices, types 150 into the Price tiers form
// (refused beside the field, the value kept), then 35, and sees 35 % in
// force in the section, the version in its history set by admin, and the
// same version through the API. With JavaScript and without.
func TestBrowserPriceTierDiscount(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) { testBrowserPriceTierDiscount(t, js) })
	}
}

func testBrowserPriceTierDiscount(t *testing.T, js bool) {
	p := newPortal(t)
	tok := tokenFor(t, p, "admin", "admin")
	ctx := btNewBrowser(t)
	if !js {
		btDo(t, ctx, "disable JavaScript", btScriptsOff())
	}
	btLoginAsAdmin(t, ctx, p.ts.URL)
	btNavigate(t, ctx, p.ts.URL+"/admin/prices")
	if got := btText(t, ctx, `[data-testid=tier-row][data-tier=preemptible] [data-testid=tier-discount]`); !strings.Contains(got, "70%") {
		t.Fatalf("seeded discount shown as %q", got)
	}
	input := `[data-testid=tier-discount-input]`
	btDo(t, ctx, "type 150", chromedp.SendKeys(chromedp.CSS(input), "150"))
	resp := btSubmit(t, ctx, "click Set discount", chromedp.Click(chromedp.CSS(`[data-testid=tier-submit]`)))
	resp = btConfirmSudo(t, ctx, resp, btAdminPassword)
	if resp.Status != http.StatusBadRequest {
		t.Fatalf("150 %%: status %d", resp.Status)
	}
	if msg := btText(t, ctx, `[data-testid=tier-form] [data-testid=error-discount_percent]`); !strings.Contains(msg, "between 0 and 100") {
		t.Errorf("error %q", msg)
	}
	if v := btValue(t, ctx, input); v != "150" {
		t.Errorf("the discount is not kept: %q", v)
	}
	btDo(t, ctx, "type 35", chromedp.Clear(chromedp.CSS(input)), chromedp.SendKeys(chromedp.CSS(input), "35"))
	resp = btSubmit(t, ctx, "click Set discount", chromedp.Click(chromedp.CSS(`[data-testid=tier-submit]`)))
	if resp.Status != http.StatusOK || btLocation(t, ctx).Path != "/admin/prices" {
		t.Fatalf("after Set discount: %d at %s", resp.Status, btLocation(t, ctx))
	}
	if flash := btText(t, ctx, `[data-testid=flash]`); !strings.Contains(flash, "35%") {
		t.Errorf("flash %q", flash)
	}
	if got := btText(t, ctx, `[data-testid=tier-row][data-tier=preemptible] [data-testid=tier-discount]`); !strings.Contains(got, "35%") {
		t.Errorf("discount in force on the page: %q", got)
	}
	if by := btText(t, ctx, `[data-testid=tier-history-row][data-discount-percent="35"] [data-testid=tier-set-by]`); by != "admin" {
		t.Errorf("history row set by %q", by)
	}
	_, out := p.api("GET", "/api/v1/admin/price-tiers", tok, "")
	items, _ := out["items"].([]any)
	var found bool
	for _, it := range items {
		m := it.(map[string]any)
		if m["tier"] == "preemptible" && m["discount_percent"] == float64(35) && m["created_by"] == "admin" {
			found = true
		}
	}
	if !found {
		t.Errorf("the API does not list the new version: %v", items)
	}
	btScreenshot(t, ctx, "admin-price-tiers-"+jsName(js)+".png")
}
