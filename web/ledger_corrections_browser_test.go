package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// An admin corrects a user's bill on the billing page, in the browser: a
// credit, a reversal with a mistyped id (the error comes back beside the
// field), then the right id; the user sees both on their statement.
func TestBrowserBillingCorrections(t *testing.T) {
	p := newPortal(t)
	ctx0 := context.Background()
	ada, err := p.srv.Store.CreateUser(ctx0, models.NewUser{Username: "ada", Password: "ada-password", Role: "user"})
	if err != nil {
		t.Fatal(err)
	}
	month := models.MonthStart(time.Now())
	mpSeedLines(t, p, ada.ID, "", month, 3_500_000, 1_234_567)
	lines, _ := p.srv.Store.Statement(ctx0, ada.ID, month, month.AddDate(0, 1, 0))
	ctx := btNewBrowser(t)
	btLoginAsAdmin(t, ctx, p.ts.URL)
	if resp := btNavigate(t, ctx, p.ts.URL+"/admin/billing"); resp.Status != http.StatusOK {
		t.Fatalf("GET /admin/billing: %d", resp.Status)
	}
	btDo(t, ctx, "fill in a credit",
		chromedp.WaitVisible(chromedp.CSS(`[data-testid=credit-user]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=credit-user]`), "ada"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=credit-amount]`), "1.50"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=credit-reason]`), "node 4 was down for an hour"),
	)
	resp := btSubmit(t, ctx, "issue the credit", chromedp.Click(chromedp.CSS(`[data-testid=credit-submit]`)))
	resp = btConfirmSudo(t, ctx, resp, btAdminPassword) // the form is posted again, unchanged
	if resp.Status != http.StatusOK {
		t.Fatalf("credit: %d", resp.Status)
	}
	if msg := btText(t, ctx, `[data-testid=correction-done]`); !strings.Contains(msg, "credit") {
		t.Fatalf("no confirmation of the credit: %q", msg)
	}
	btDo(t, ctx, "type a wrong id",
		chromedp.SendKeys(chromedp.CSS(`[data-testid=reverse-ids]`), "12x"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=reverse-reason]`), "charged twice"),
	)
	if resp := btSubmit(t, ctx, "reverse a wrong id", chromedp.Click(chromedp.CSS(`[data-testid=reverse-submit]`))); resp.Status != http.StatusBadRequest {
		t.Fatalf("wrong id: %d, want 400", resp.Status)
	}
	if msg := btText(t, ctx, `[data-testid=error-ids]`); !strings.Contains(msg, "ledger line ids") {
		t.Fatalf("error beside the ids: %q", msg)
	}
	btDo(t, ctx, "type the right id",
		chromedp.Clear(chromedp.CSS(`[data-testid=reverse-ids]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid=reverse-ids]`), fmt.Sprint(lines[1].ID)),
	)
	if resp := btSubmit(t, ctx, "reverse the line", chromedp.Click(chromedp.CSS(`[data-testid=reverse-submit]`))); resp.Status != http.StatusOK {
		t.Fatalf("reverse: %d", resp.Status)
	}
	btScreenshot(t, ctx, "admin-billing-corrections.png")
	m, _ := p.srv.Store.MonthTotals(ctx0, ada.ID, month)
	if amount, want := m.AmountMicros, int64(3_500_000-1_500_000); amount != want {
		t.Fatalf("ada's month after the corrections: %d, want %d", amount, want)
	}

	btSubmit(t, ctx, "log out", chromedp.Click(chromedp.CSS(`.account form[action="/logout"] button`)))
	btLogin(t, ctx, "ada", "ada-password")
	btNavigate(t, ctx, p.ts.URL+"/usage")
	page := strings.Join(btTexts(t, ctx, `[data-testid=statement-row]`), "\n")
	for _, want := range []string{"node 4 was down for an hour", "charged twice"} {
		if !strings.Contains(page, want) {
			t.Errorf("ada's statement lacks %q:\n%s", want, page)
		}
	}
	btScreenshot(t, ctx, "usage-corrections.png")
}
