package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"workbench/models/pricing"
)

// The prices page's "Price tiers" section (issue 12 §3): the seeded
// preemptible discount is shown in force with its history, the form adds a
// version now or later through the API's logic (audited), the discounted
// rate shows beside each unit rate, and bad input is shown beside the field
// with the values kept.
func TestPriceTierFormAddsVersions(t *testing.T) {
	p := newPortal(t)
	admin, adminTok := mpAdmin(t, p)
	_, body := p.get(admin, "/admin/prices")
	doc := mpDoc(t, body)
	row := doc.Find(`[data-testid=tier-current] [data-testid=tier-row][data-tier=preemptible]`)
	if row.Length() != 1 {
		t.Fatalf("no preemptible tier row in the section:\n%s", doc.Find(`[data-testid=price-tiers]`).Text())
	}
	seeded, _ := row.Attr("data-discount-percent")
	if seeded != "70" {
		t.Errorf("seeded discount on the page: %q, want 70", seeded)
	}
	gpu := doc.Find(`[data-testid=price-row][data-resource=gpu]`).First()
	micros, _ := gpu.Attr("data-rate-micros")
	if pre := gpu.Find(`[data-testid=price-preemptible]`).Text(); pre == "" {
		t.Errorf("no preemptible rate beside the GPU rate (%s micros)", micros)
	}
	if doc.Find(`[data-testid=price-row][data-resource=cpu] [data-testid=price-preemptible]`).Length() != 0 {
		t.Error("CPU is not discounted, yet shows a preemptible rate")
	}
	histLen := func() int {
		_, out := p.api("GET", "/api/v1/admin/price-tiers", adminTok, "")
		items, _ := out["items"].([]any)
		return len(items)
	}
	n0 := histLen()

	code, loc, _ := mpPost(t, p, admin, "/admin/price-tiers", url.Values{"tier": {"preemptible"}, "discount_percent": {"40"}, "effective_from": {""}})
	if code != http.StatusSeeOther || loc != "/admin/prices#price-tiers" {
		t.Fatalf("set discount: %d → %q", code, loc)
	}
	_, body = p.get(admin, "/admin/prices")
	doc = mpDoc(t, body)
	if d, _ := doc.Find(`[data-testid=tier-row][data-tier=preemptible]`).Attr("data-discount-percent"); d != "40" {
		t.Errorf("discount in force on the page: %q, want 40", d)
	}
	if !strings.Contains(doc.Find(`[data-testid=flash], .flash`).Text(), "40%") {
		t.Errorf("no flash naming the new discount: %q", doc.Find(`[data-testid=flash], .flash`).Text())
	}
	if by := doc.Find(`[data-testid=tier-history-row][data-discount-percent="40"] [data-testid=tier-set-by]`).Text(); by != "admin" {
		t.Errorf("history row set by %q, want admin", by)
	}
	// The discounted rate is the GPU rate less 40 %, as the ledger prices it.
	m, _ := strconv.ParseInt(micros, 10, 64)
	want := pricing.FormatRate(m * 60 / 100)
	if pre := doc.Find(`[data-testid=price-row][data-resource=gpu]`).First().Find(`[data-testid=price-preemptible]`).Text(); !strings.Contains(pre, want) {
		t.Errorf("preemptible rate beside %d micros at 40%% off: %q, want %s", m, pre, want)
	}

	// Later: scheduled, the current discount unchanged, the next change shown.
	future := time.Now().UTC().Add(48 * time.Hour).Format("2006-01-02T15:04")
	if code, _, body := mpPost(t, p, admin, "/admin/price-tiers", url.Values{"tier": {"preemptible"}, "discount_percent": {"55%"}, "effective_from": {future}}); code != http.StatusSeeOther {
		t.Fatalf("future discount: %d\n%s", code, body)
	}
	_, body = p.get(admin, "/admin/prices")
	doc = mpDoc(t, body)
	if d, _ := doc.Find(`[data-testid=tier-row][data-tier=preemptible]`).Attr("data-discount-percent"); d != "40" {
		t.Errorf("a future discount shows as in force: %q", d)
	}
	if doc.Find(`[data-testid=tier-scheduled]`).Length() != 1 {
		t.Error("the future discount is not shown as scheduled")
	}
	if next := doc.Find(`[data-testid=tier-row] [data-testid=tier-next]`).Text(); !strings.Contains(next, "55%") {
		t.Errorf("next change: %q", next)
	}
	n1 := histLen()
	if n1 != n0+2 {
		t.Errorf("tier history %d → %d, want +2", n0, n1)
	}

	// Refused: back-dated, out of range, not a number, a bad time, an unknown tier.
	for _, tc := range []struct {
		form  url.Values
		field string
	}{
		{url.Values{"tier": {"preemptible"}, "discount_percent": {"30"}, "effective_from": {"2020-01-01T00:00"}}, "effective_from"},
		{url.Values{"tier": {"preemptible"}, "discount_percent": {"101"}}, "discount_percent"},
		{url.Values{"tier": {"preemptible"}, "discount_percent": {"-1"}}, "discount_percent"},
		{url.Values{"tier": {"preemptible"}, "discount_percent": {"33.5"}}, "discount_percent"},
		{url.Values{"tier": {"preemptible"}, "discount_percent": {"30"}, "effective_from": {"tomorrow"}}, "effective_from"},
		{url.Values{"tier": {"gold"}, "discount_percent": {"30"}}, "tier"},
	} {
		code, _, body := mpPost(t, p, admin, "/admin/price-tiers", tc.form)
		if code != http.StatusBadRequest {
			t.Errorf("%v: status %d, want 400", tc.form, code)
			continue
		}
		doc := mpDoc(t, body)
		if doc.Find(`[data-testid=tier-form] [data-testid=error-`+tc.field+`]`).Length() != 1 {
			t.Errorf("%v: no error beside %s", tc.form, tc.field)
		}
		if v, _ := doc.Find(`[data-testid=tier-discount-input]`).Attr("value"); v != tc.form.Get("discount_percent") {
			t.Errorf("the discount input is not kept: %q", v)
		}
		if v, _ := doc.Find(`[data-testid=tier-effective]`).Attr("value"); v != tc.form.Get("effective_from") {
			t.Errorf("the effective time is not kept: %q", v)
		}
	}
	if n := histLen(); n != n1 {
		t.Errorf("refused discounts were added: %d → %d", n1, n)
	}
	entries, _ := p.srv.Store.ListAudit(context.Background(), 50)
	audited := 0
	for _, e := range entries {
		if e.Action == "price_tier.add" && e.Actor == "admin" {
			audited++
		}
	}
	if audited != 2 {
		t.Errorf("discount changes audited: %d, want 2", audited)
	}
}
