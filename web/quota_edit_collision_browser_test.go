package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// In Chromium, JavaScript on and off: the admin has the quota console open,
// another admin changes the group's quota meanwhile, the admin saves the
// row — the page says the quota changed, keeps what was typed, and the
// second Save overwrites on purpose.
func TestBrowserQuotaSaveAfterAnotherAdminsChange(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) {
			p, b := btAdminIn(t, js)
			ctx := context.Background()
			adminTok := tokenFor(t, p, "root", "admin")
			if code, out := p.api("POST", "/api/v1/admin/groups", adminTok, `{"name":"nlp"}`); code != http.StatusCreated {
				t.Fatalf("create group: %d %v", code, out)
			}
			put := func(body string) {
				t.Helper()
				if code, out := p.api("PUT", "/api/v1/admin/quotas/groups/nlp", adminTok, body); code != http.StatusOK {
					t.Fatalf("PUT quota: %d %v", code, out)
				}
			}
			put(`{"max_gpus":2,"budget_per_month_micros":50000000}`)
			const row = `[data-testid=quota-row][data-name=nlp]`
			btNavigate(t, b, p.ts.URL+"/admin/quotas")
			btDo(t, b, "type 3 GPUs", chromedp.WaitVisible(chromedp.CSS(row+` input[name=max_gpus]`)),
				chromedp.Clear(chromedp.CSS(row+` input[name=max_gpus]`)), chromedp.SendKeys(chromedp.CSS(row+` input[name=max_gpus]`), "3"))
			put(`{"max_gpus":2,"budget_per_month_micros":80000000}`) // the other admin

			resp := btSubmit(t, b, "click Save", chromedp.Click(chromedp.CSS(row+` [data-testid=quota-save]`)))
			resp = btConfirmSudo(t, b, resp, btAdminPassword)
			if resp.Status != http.StatusConflict {
				t.Fatalf("save over the other change: status %d, want 409", resp.Status)
			}
			if msg := btText(t, b, row+` [data-testid="error-_"]`); !strings.Contains(msg, "someone changed this quota") {
				t.Fatalf("notice %q", msg)
			}
			// It shows what is saved where it differs from the form: the
			// other admin's budget, and the GPUs this admin is changing.
			if msg := btText(t, b, row+` [data-testid="error-_theirs"]`); !strings.Contains(msg, "Budget / month (USD) = 80") || !strings.Contains(msg, "GPUs at once = 2") {
				t.Fatalf("the saved values are not shown: %q", msg)
			}
			if v, _ := chromedp.Run(b, chromedp.Value(chromedp.CSS(row+` input[name=max_gpus]`))); v != "3" {
				t.Fatalf("the typed value is not kept: %q", v)
			}
			nlp, _ := p.srv.Store.GroupByName(ctx, "nlp")
			if q, _, _ := p.srv.Store.Quota(ctx, models.ScopeGroup, nlp.ID); *q.BudgetPerMonthMicros != 80_000_000 || *q.MaxGPUs != 2 {
				t.Fatalf("the refused save changed the quota: %+v", q)
			}
			if resp := btSubmit(t, b, "click Save again", chromedp.Click(chromedp.CSS(row+` [data-testid=quota-save]`))); resp.Status != http.StatusOK {
				t.Fatalf("the second save: status %d", resp.Status)
			}
			if q, _, _ := p.srv.Store.Quota(ctx, models.ScopeGroup, nlp.ID); *q.MaxGPUs != 3 {
				t.Fatalf("the second save did not overwrite: %+v", q)
			}
		})
	}
}
