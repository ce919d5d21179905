package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// With JavaScript off, an admin's Delete on a cloud price asks on a page
// of the portal's own (confirm() was its only question, and the price
// went at the click); "No, go back" keeps it, Yes deletes it.
func TestBrowserCloudPriceDeleteAsksWithoutJavaScript(t *testing.T) {
	p, b := btAdminIn(t, false)
	tok := tokenFor(t, p, "ops", "admin")
	code, out := p.api("POST", "/api/v1/admin/cloud-prices", tok,
		`{"provider":"Acme","offer":"a1","gpu_model":"NVIDIA H100 80GB HBM3","tier":"on-demand","currency":"USD","price_per_gpu_hour":"2.5","source":"test"}`)
	if code != http.StatusCreated && code != http.StatusOK {
		t.Fatalf("add a cloud price: %d %v", code, out)
	}
	id := int64(num(out["id"]))
	exists := func() bool {
		_, err := p.srv.Store.CloudPriceByID(context.Background(), id)
		return err == nil
	}
	for _, answer := range []string{"confirm-no", "confirm-yes"} {
		btNavigate(t, b, p.ts.URL+"/admin/cloud-prices")
		resp := btSubmit(t, b, "click Delete", chromedp.Click(chromedp.CSS(`form[action="/admin/cloud-prices/`+itoa(id)+`/delete"] [data-testid=delete-cloud-price]`)))
		if resp.Status == http.StatusForbidden {
			resp = btConfirmSudo(t, b, resp, btAdminPassword)
		}
		if got := btText(t, b, `[data-testid=confirm-question]`); resp.Status != http.StatusOK || !strings.Contains(got, "Delete Acme a1") {
			t.Fatalf("Delete with no JavaScript: %d, asked %q", resp.Status, got)
		}
		if !exists() {
			t.Fatal("the price went before the question was answered")
		}
		btSubmit(t, b, "answer "+answer, chromedp.Click(chromedp.CSS(`[data-testid=`+answer+`]`)))
		if want := answer == "confirm-no"; exists() != want {
			t.Fatalf("after %s the price exists: %v, want %v", answer, exists(), want)
		}
	}
}
