package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"workbench/models/pricing"
)

// Home storage not billed yet counts where a month's spend is shown, as the
// budget counts it: the member's bar (/api/v1/me), the line under her
// statement, the admin's billing page and the quota console agree (the
// budget figure had it and the statement and the console did not).
func TestAccruingStorageAgreesAcrossPages(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	adaTok := tokenFor(t, p, "ada", "user")
	ada, _ := p.srv.Store.UserByUsername(ctx, "ada")
	if err := p.srv.Store.RecordVolume(ctx, ada.ID, "wb-home-test-ada", 500_000 /* 500 GiB in milli-GiB */, time.Now().Add(-3*time.Hour), time.Time{}, 0); err != nil {
		t.Fatal(err)
	}
	code, me := p.api("GET", "/api/v1/me", adaTok, "")
	spend := int64(me["usage"].(map[string]any)["month_spend_micros"].(float64))
	if code != 200 || spend <= 0 {
		t.Fatalf("/api/v1/me: %d, month spend %d; want the home's storage in it", code, spend)
	}
	want := pricing.Format(spend)

	c := p.client()
	p.login(c, "ada", "ada-password")
	_, body := p.get(c, "/usage")
	if got := parseHTML(t, body).Find(tid("statement-pending")).Text(); !strings.Contains(got, want) {
		t.Errorf("/usage says %q; want the %s accruing that her spend counts", got, want)
	}
	adminC, _ := mpAdmin(t, p)
	_, body = p.get(adminC, "/admin/billing")
	if got := parseHTML(t, body).Find(tid("billing-pending")).Text(); !strings.Contains(got, want) {
		t.Errorf("/admin/billing says %q; want %s accruing", got, want)
	}
	_, body = p.get(adminC, "/admin/quotas?q=ada")
	if got := parseHTML(t, body).Find(`[data-testid=quota-row][data-name=ada]`).Text(); !strings.Contains(got, want) {
		t.Errorf("the quota console's row for ada: %q; want her spend %s", got, want)
	}
	// Another user's home counts on his row, not hers.
	bobTok := tokenFor(t, p, "bob", "user")
	bob, _ := p.srv.Store.UserByUsername(ctx, "bob")
	if err := p.srv.Store.RecordVolume(ctx, bob.ID, "wb-home-test-bob", 2_000_000, time.Now().Add(-3*time.Hour), time.Time{}, 0); err != nil {
		t.Fatal(err)
	}
	_, bm := p.api("GET", "/api/v1/me", bobTok, "")
	bobWant := pricing.Format(int64(bm["usage"].(map[string]any)["month_spend_micros"].(float64)))
	_, body = p.get(adminC, "/admin/quotas")
	doc := parseHTML(t, body)
	if got := doc.Find(`[data-testid=quota-row][data-name=bob]`).Text(); bobWant == want || !strings.Contains(got, bobWant) {
		t.Errorf("the quota console's row for bob: %q; want his spend %s (hers is %s)", got, bobWant, want)
	}
	if got := doc.Find(`[data-testid=quota-row][data-name=ada]`).Text(); !strings.Contains(got, want) {
		t.Errorf("ada's row beside bob's: %q; want her spend %s", got, want)
	}
}
