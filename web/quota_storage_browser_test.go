package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// In Chromium, JavaScript on and off: the admin types a home-storage
// limit into a group's quota row and clicks Save; it is stored. A limit
// past the console's bound is refused in the row with the bound named and
// what was typed kept.
func TestBrowserQuotaConsoleSavesAStorageLimit(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) {
			p, b := btAdminIn(t, js)
			ctx := context.Background()
			adminTok := tokenFor(t, p, "root", "admin")
			if code, out := p.api("POST", "/api/v1/admin/groups", adminTok, `{"name":"nlp"}`); code != http.StatusCreated {
				t.Fatalf("create group: %d %v", code, out)
			}
			const row = `[data-testid=quota-row][data-name=nlp]`
			const field = row + ` input[name=max_storage_gib]`
			btNavigate(t, b, p.ts.URL+"/admin/quotas")
			btDo(t, b, "type 20 GiB", chromedp.WaitVisible(chromedp.CSS(field)),
				chromedp.Clear(chromedp.CSS(field)), chromedp.SendKeys(chromedp.CSS(field), "20"))
			resp := btSubmit(t, b, "click Save", chromedp.Click(chromedp.CSS(row+` [data-testid=quota-save]`)))
			btConfirmSudo(t, b, resp, btAdminPassword)
			nlp, _ := p.srv.Store.GroupByName(ctx, "nlp")
			if q, _, err := p.srv.Store.Quota(ctx, models.ScopeGroup, nlp.ID); err != nil || q.MaxStorageGiB == nil || *q.MaxStorageGiB != 20 {
				t.Fatalf("after Save the group's storage limit is %+v (%v), want 20 GiB", q.MaxStorageGiB, err)
			}

			btNavigate(t, b, p.ts.URL+"/admin/quotas")
			btDo(t, b, "type a limit past the bound", chromedp.WaitVisible(chromedp.CSS(field)),
				chromedp.Clear(chromedp.CSS(field)), chromedp.SendKeys(chromedp.CSS(field), "2000000000"))
			resp = btSubmit(t, b, "click Save", chromedp.Click(chromedp.CSS(row+` [data-testid=quota-save]`)))
			if resp.Status != http.StatusBadRequest {
				t.Fatalf("a limit past the bound: status %d, want 400", resp.Status)
			}
			if msg := btText(t, b, row+` [data-testid="error-max_storage_gib"]`); !strings.Contains(msg, "at most 1,000,000,000") {
				t.Errorf("the field's message %q does not name the bound", msg)
			}
			if v, _ := chromedp.Run(b, chromedp.Value(chromedp.CSS(field))); v != "2000000000" {
				t.Errorf("the typed value is not kept: %q", v)
			}
			if q, _, _ := p.srv.Store.Quota(ctx, models.ScopeGroup, nlp.ID); q.MaxStorageGiB == nil || *q.MaxStorageGiB != 20 {
				t.Errorf("the refused save changed the limit: %+v", q.MaxStorageGiB)
			}
		})
	}
}
