package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"workbench/models"
	"workbench/web"
)

// A figure compared against the monthly budget reads the same on the
// banner, the usage page and in the refusal (docs/ux-choices.md, session
// 57): a sliver under a cent is written to the micro-unit, a spend in
// cents as the statement writes it but never as reaching a budget it is
// still under. The banner read "You have spent < 0.01 USD of
// your monthly budget of 0.01 USD (90%)" and "1.00 USD of … 1.00 USD
// (99%)"; the refusals that followed wrote what was left exactly.
func TestBudgetFiguresUnderACentOnTheBannerAndUsage(t *testing.T) {
	// No minimum charge: every flavor can still start on a sliver, so the
	// 80% sentence shows rather than "used up".
	p := newPortal(t, func(c *web.Config) { c.Workbenches.MinCharge = -1 })
	ctx := context.Background()
	admin, adminTok := mpAdmin(t, p)
	month := models.MonthStart(time.Now())
	for _, c := range []struct {
		user          string
		budget, spent int64
		banner, bar   string // English
		zhBanner      string
		zhBar         string
	}{
		{"ada", 10_000, 9_000, "You have spent 0.009 USD of your monthly budget of 0.01 USD (90%)", "0.009 USD / 0.01 USD", "$0.009", "$0.009 / $0.01"},
		{"bob", 1_000_000, 996_000, "You have spent 0.99 USD of your monthly budget of 1.00 USD (99%)", "0.99 USD / 1.00 USD", "$0.99", "$0.99 / $1.00"},
	} {
		tokenFor(t, p, c.user, "user")
		u, _ := p.srv.Store.UserByUsername(ctx, c.user)
		mpSeedLines(t, p, u.ID, "", month, c.spent)
		if st, body := p.api("PUT", "/api/v1/admin/quotas/users/"+c.user, adminTok, fmt.Sprintf(`{"budget_per_month_micros": %d}`, c.budget)); st != http.StatusOK {
			t.Fatalf("%s's budget: %d %v", c.user, st, body)
		}
		for _, lang := range []string{"en", "zh-CN"} {
			cl := p.client()
			p.login(cl, c.user, c.user+"-password")
			wantBanner, wantBar := c.banner, c.bar
			if lang == "zh-CN" {
				p.postForm(cl, "/language", url.Values{"lang": {"zh-CN"}, "back": {"/"}})
				wantBanner, wantBar = c.zhBanner, c.zhBar
			}
			_, home := p.get(cl, "/")
			banner := strings.Join(strings.Fields(mpDoc(t, home).Find(`[data-testid=budget-banner]`).Text()), " ")
			if !strings.Contains(banner, wantBanner) || strings.Contains(banner, "<") {
				t.Errorf("%s (%s): the banner reads %q, want %q", c.user, lang, banner, wantBanner)
			}
			_, usage := p.get(cl, "/usage")
			bar := strings.Join(strings.Fields(mpDoc(t, usage).Find(`[data-testid=quota-bar-spend] [data-testid=quota-figures]`).Text()), " ")
			if bar != wantBar {
				t.Errorf("%s (%s): the usage page's spend reads %q, want %q", c.user, lang, bar, wantBar)
			}
		}
		// The admin's quota console writes the spend as the user reads it.
		_, console := p.get(admin, "/admin/quotas?q="+c.user)
		sel := `[data-testid=quota-row][data-name=` + c.user + `] [data-testid=quota-bar-spend] [data-testid=quota-figures]`
		if got := strings.Join(strings.Fields(mpDoc(t, console).Find(sel).Text()), " "); got != c.bar {
			t.Errorf("%s: the quota console's spend reads %q, want %q", c.user, got, c.bar)
		}
	}
}

// What is left of the budget beside the bookings' set-aside, under a
// cent, reads the same on the banner where the user works and in the
// refusal of the launch that follows: the banner said "all of the < 0.01
// USD left" and the refusal "all of the < 0.01 USD left" while a refusal
// with an amount owed under a cent wrote "0.003 USD" (session 56).
func TestBudgetLeftUnderACentAgreesOnBannerAndRefusal(t *testing.T) {
	p := newPortal(t, func(c *web.Config) { c.Workbenches.MinCharge = -1 })
	// Refused before any container is made: the image need not exist.
	p.addImage(fakeCatalogImage("fake", "workbench-test/never-pulled:latest"))
	ctx := context.Background()
	admin := tokenFor(t, p, "admin", "admin")
	dana := tokenFor(t, p, "dana", "user")
	if code, out := p.api("PUT", "/api/v1/admin/reservation-settings", admin, `{"bill_unused": true}`); code != http.StatusOK {
		t.Fatalf("bill unused time: %d %v", code, out)
	}
	if code, out := p.api("PUT", "/api/v1/admin/quotas/users/dana", admin, `{"budget_per_month_micros": 1000000000}`); code != http.StatusOK {
		t.Fatalf("dana's budget: %d %v", code, out)
	}
	start := time.Now().UTC().Truncate(time.Minute).Add(10 * time.Minute)
	if start.Month() != start.Add(time.Hour).Month() || start.Month() != time.Now().UTC().Month() {
		t.Skip("the booking must lie in this month")
	}
	if code, out := p.api("POST", "/api/v1/reservations", dana, fmt.Sprintf(`{"gpu_model": "NVIDIA H100 80GB HBM3", "units": 2, "starts_at": %q, "ends_at": %q}`,
		start.Format(time.RFC3339), start.Add(time.Hour).Format(time.RFC3339))); code != http.StatusCreated {
		t.Fatalf("book 2 GPUs: %d %v", code, out)
	}
	// Spent: all of a budget of 10.00 but 0.003.
	d, _ := p.srv.Store.UserByUsername(ctx, "dana")
	mpSeedLines(t, p, d.ID, "", models.MonthStart(time.Now()), 9_997_000)
	if code, out := p.api("PUT", "/api/v1/admin/quotas/users/dana", admin, `{"budget_per_month_micros": 10000000}`); code != http.StatusOK {
		t.Fatalf("dana's budget: %d %v", code, out)
	}
	const left = "all of the 0.003 USD left of your monthly budget"
	code, body := p.api("POST", "/api/v1/workbenches", dana, `{"name":"other","image":"fake","flavor":"1x H100 80GB HBM3"}`)
	if code != http.StatusUnprocessableEntity || errCode(body) != "quota_exceeded" || !strings.Contains(errMessage(body), left) {
		t.Fatalf("a launch off the booking with 0.003 left: %d %v; want 422 quota_exceeded saying %q", code, body, left)
	}
	c := p.client()
	p.login(c, "dana", "dana-password")
	_, home := p.get(c, "/")
	banner := strings.Join(strings.Fields(mpDoc(t, home).Find(`[data-testid=budget-banner]`).Text()), " ")
	if !strings.Contains(banner, left) {
		t.Errorf("the banner reads %q; want %q, as the refusal says", banner, left)
	}
	p.postForm(c, "/language", url.Values{"lang": {"zh-CN"}, "back": {"/"}})
	_, home = p.get(c, "/")
	zh := mpDoc(t, home).Find(`[data-testid=budget-banner]`).Text()
	if !strings.Contains(zh, "$0.003") || strings.Contains(zh, "<") {
		t.Errorf("the Chinese banner reads %q; want the $0.003 left", zh)
	}
}
