package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// TestBudgetLeftBelowEveryMinimumIsUsedUp: a budget whose rest covers no
// flavor's minimum charge reads "used up" (every launch is refused, and the
// budget stop leaves less than a second's worth); the user was told only
// "80% or more" while her workbench had been stopped for it. A rest that a
// flavor can still start on reads as the 80% warning.
func TestBudgetLeftBelowEveryMinimumIsUsedUp(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tok := tokenFor(t, p, "carol", "user")
	carol, _ := p.srv.Store.UserByUsername(ctx, "carol")
	budget := int64(2_000_000)
	if err := p.srv.Store.SetQuota(ctx, models.ScopeUser, carol.ID, models.Limits{BudgetPerMonthMicros: &budget}, "test"); err != nil {
		t.Fatal(err)
	}
	month := models.MonthStart(time.Now())
	spend := func(key string, micros int64) {
		t.Helper()
		line := models.LedgerEntry{IdempotencyKey: "test:budget:" + key, UserID: carol.ID, Resource: "cpu",
			PeriodStart: month, PeriodEnd: month.Add(time.Hour), Seconds: 3600, QuantityMilli: 1000, RateMicros: micros, AmountMicros: micros}
		if _, err := p.srv.Store.RecordBilling(ctx, 0, []models.LedgerEntry{line}, month, true); err != nil {
			t.Fatal(err)
		}
	}
	usage := func() (limit string, warnings []any) {
		t.Helper()
		code, me := p.api("GET", "/api/v1/me", tok, "")
		if code != http.StatusOK {
			t.Fatalf("GET /api/v1/me: %d %v", code, me)
		}
		u := me["usage"].(map[string]any)
		limit, _ = u["limit_reached"].(string)
		warnings, _ = u["warnings"].([]any)
		return limit, warnings
	}

	spend("a", 1_700_000) // 85%: every flavor can still start
	if limit, warnings := usage(); limit != "" || len(warnings) != 1 {
		t.Errorf("at 85%%: limit %q, warnings %v; want the 80%% warning only", limit, warnings)
	}
	spend("b", 299_500) // 500 micro-units left: below any minimum charge
	limit, warnings := usage()
	if limit != "quota exceeded: the monthly budget is used up" || len(warnings) != 0 {
		t.Errorf("with 0.0005 left: limit %q, warnings %v; want it used up, not 80%%", limit, warnings)
	}
	// The banner where she works says it is used up, not "99%".
	c := p.client()
	p.login(c, "carol", "carol-password")
	_, page := p.get(c, "/")
	banner := mpDoc(t, page).Find(`[data-testid=budget-banner]`).Text()
	if !strings.Contains(banner, "Your monthly budget is used up: new launches are refused") || strings.Contains(banner, "99%") {
		t.Errorf("the banner reads %q, want the budget used up and no percentage", banner)
	}
	// One sentence, one colon (it read "quota exceeded: the monthly
	// budget is used up: new launches …"), in Chinese too.
	if n := strings.Count(banner, ": "); n != 1 {
		t.Errorf("the banner reads %q: %d colons, want one", banner, n)
	}
	zc := p.client()
	p.login(zc, "carol", "carol-password")
	p.postForm(zc, "/language", url.Values{"lang": {"zh-CN"}, "back": {"/"}})
	_, page = p.get(zc, "/")
	if zh := mpDoc(t, page).Find(`[data-testid=budget-banner]`).Text(); !strings.Contains(zh, "你本月的预算已用完：在下个月") || strings.Count(zh, "：") != 1 {
		t.Errorf("the Chinese banner reads %q, want one sentence with one colon", zh)
	}
	// The launch is refused, as the page now says.
	imgs, err := p.srv.Store.ListImages(ctx, true)
	if err != nil || len(imgs) == 0 {
		t.Fatalf("images: %v", err)
	}
	code, out := p.api("POST", "/api/v1/workbenches", tok, `{"name":"x","image":"`+imgs[0].Name+`","flavor":"CPU small"}`)
	if code != http.StatusUnprocessableEntity {
		t.Errorf("launch with 0.0005 left: %d %v, want 422", code, out)
	}
}
