package web_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"workbench/models"
)

// Two admins on one quota: admin A opened the console, admin B raised the
// group's budget through the API, then A saved the row with only "GPUs at
// once" changed. A's stale form must not silently put the old budget back:
// it is refused (409) with A's values kept in the row, and saving again
// from that answer is a deliberate overwrite.
func TestQuotaConsoleSaveOverAnotherAdminsChange(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	adminC, adminTok := mpAdmin(t, p)
	if code, out := p.api("POST", "/api/v1/admin/groups", adminTok, `{"name":"nlp"}`); code != http.StatusCreated {
		t.Fatalf("create group: %d %v", code, out)
	}
	put := func(body string) {
		t.Helper()
		if code, out := p.api("PUT", "/api/v1/admin/quotas/groups/nlp", adminTok, body); code != http.StatusOK {
			t.Fatalf("PUT quota %s: %d %v", body, code, out)
		}
	}
	put(`{"max_gpus":2,"budget_per_month_micros":50000000}`)
	nlp, err := p.srv.Store.GroupByName(ctx, "nlp")
	if err != nil {
		t.Fatal(err)
	}
	rowSel := fmt.Sprintf(`#quota-group-%d`, nlp.ID)

	_, page := p.get(adminC, "/admin/quotas")
	version := mpDoc(t, page).Find(rowSel+` input[name=version]`).AttrOr("value", "")
	if version == "" {
		t.Fatal("the quota row's form carries no version")
	}
	put(`{"max_gpus":2,"budget_per_month_micros":80000000}`) // admin B

	form := mpQuotaForm("3", "50")
	form.Set("version", version)
	res, body := p.postFormBody(adminC, "/admin/quotas/groups/nlp", form)
	if res.StatusCode != http.StatusConflict {
		t.Fatalf("the stale save: %d, want 409", res.StatusCode)
	}
	row := mpDoc(t, body).Find(rowSel)
	if row.Find(`[data-testid="error-_"]`).Length() != 1 || row.Find(`input[name=max_gpus]`).AttrOr("value", "") != "3" {
		t.Fatalf("the refused save does not come back to nlp's row with the notice and A's values")
	}
	stored, _, err := p.srv.Store.Quota(ctx, models.ScopeGroup, nlp.ID)
	if err != nil || stored.BudgetPerMonthMicros == nil || *stored.BudgetPerMonthMicros != 80_000_000 || *stored.MaxGPUs != 2 {
		t.Fatalf("after the stale save the quota is %+v (%v); want B's budget of 80 kept", stored, err)
	}

	// Saving the answer's form again overwrites on purpose.
	form.Set("version", row.Find(`input[name=version]`).AttrOr("value", ""))
	if res := p.postForm(adminC, "/admin/quotas/groups/nlp", form); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the second save: %d, want 303", res.StatusCode)
	}
	stored, _, _ = p.srv.Store.Quota(ctx, models.ScopeGroup, nlp.ID)
	if *stored.MaxGPUs != 3 || *stored.BudgetPerMonthMicros != 50_000_000 {
		t.Fatalf("after the deliberate save the quota is %+v", stored)
	}
}
