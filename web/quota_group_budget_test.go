package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
)

// A group's budget is each member's own monthly limit, not a sum the group
// shares (models.ResolveLimits: a member's effective budget is the group's
// value, checked against that member's spending). The quota console says
// so on the group's row, beside the field, and over the table, in English
// and Chinese; user and default rows carry no such note.
func TestQuotaConsoleSaysAGroupBudgetIsPerMember(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	st := p.srv.Store
	g, err := st.CreateGroup(ctx, "lab", "")
	if err != nil {
		t.Fatal(err)
	}
	budget := int64(100_000_000)
	if err := st.SetQuota(ctx, models.ScopeGroup, g.ID, models.Limits{BudgetPerMonthMicros: &budget}, "admin"); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"alice", "bob"} {
		tokenFor(t, p, name, "user")
		u, _ := st.UserByUsername(ctx, name)
		if err := st.AddGroupMember(ctx, g.ID, u.ID); err != nil {
			t.Fatal(err)
		}
		// What the note says: every member gets the whole budget.
		if lim, err := st.EffectiveQuota(ctx, u.ID); err != nil || lim.BudgetPerMonthMicros == nil || *lim.BudgetPerMonthMicros != budget {
			t.Fatalf("%s's effective budget: %v %v, want the group's 100 for each member", name, lim.BudgetPerMonthMicros, err)
		}
	}

	c := p.client()
	p.login(c, "admin", adminPassword)
	for _, tc := range []struct{ lang, row, page string }{
		{"en", "Per member", "not shared by the group"},
		{"zh-CN", "按成员计", "并非全组共享"},
	} {
		req, _ := http.NewRequest(http.MethodGet, p.ts.URL+"/admin/quotas", nil)
		req.Header.Set("Accept-Language", tc.lang)
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := goquery.NewDocumentFromReader(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("%s: /admin/quotas %d %v", tc.lang, res.StatusCode, err)
		}
		if got := doc.Find(`[data-testid=quota-per-member]`).Text(); !strings.Contains(got, tc.page) {
			t.Errorf("%s: the console's note reads %q, want it to say a group's values are not shared", tc.lang, got)
		}
		group := doc.Find(`[data-testid=quota-row][data-scope=group][data-name=lab]`)
		help := group.Find(`[data-testid=quota-help-budget]`)
		if !strings.Contains(help.Text(), tc.row) {
			t.Errorf("%s: the group's budget field says %q, want it per member", tc.lang, help.Text())
		}
		id, _ := help.Attr("id")
		if by, _ := group.Find(`[data-testid=quota-input-budget]`).Attr("aria-describedby"); id == "" || by != id {
			t.Errorf("%s: the budget input is described by %q, the note is %q", tc.lang, by, id)
		}
		if doc.Find(`[data-testid=quota-row][data-scope=default]`).Length() != 1 || doc.Find(`[data-testid=quota-row][data-scope=user]`).Length() == 0 {
			t.Fatalf("%s: the console lists no default or user row", tc.lang)
		}
		doc.Find(`[data-testid=quota-row]`).Each(func(_ int, row *goquery.Selection) {
			if scope, _ := row.Attr("data-scope"); scope != "group" && row.Find(`[data-testid=quota-help-budget]`).Length() != 0 {
				t.Errorf("%s: a %s row carries the group budget's note", tc.lang, scope)
			}
		})
	}
}
