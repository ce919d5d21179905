package templates_test

import (
	"strings"
	"testing"

	"workbench/templates"
)

func TestUsagePageBarsWarningsAndStatement(t *testing.T) {
	v := templates.UsageView{Currency: "USD",
		Bars: []templates.QuotaBar{
			{Key: "gpus", Label: "GPUs in use", Used: "2", Limit: "4", DataUsed: "2", DataLimit: "4", Percent: 50, Level: "ok"},
			{Key: "spend", Label: "Spend this month", Used: "85.00 USD", Limit: "100.00 USD", DataUsed: "85000000", DataLimit: "100000000", Percent: 85, Level: "warn"},
			{Key: "workbenches", Label: "Active workbenches", Used: "1", Limit: "unlimited", DataUsed: "1", DataLimit: "unlimited", Unlimited: true, Level: "ok"},
		},
		Warnings: []string{"You have spent 80% or more of your monthly budget."},
		Month:    templates.MonthNav{Action: "/usage", Value: "2026-01", Label: "January 2026", Prev: "/usage?month=2025-12", Current: true},
		Summary:  []templates.StatementGroup{{Name: "train", GPUHours: "1.00", Amount: "3.50 USD"}},
		Total:    "3.50 USD", TotalHours: "1.00", Pending: "0.42 USD",
		Lines: []templates.StatementLine{
			{Period: "2026-01-02 10:00:00 – 11:00:00", Workbench: "train", Resource: "gpu", GPUModel: "NVIDIA H100", Duration: "1:00:00",
				Quantity: "1 GPU", Rate: "3.50 / GPU-hour", Amount: "3.50 USD"},
			{Period: "2026-01-02 10:00:00 – 11:00:00", Workbench: "train", Resource: "gpu", Amount: "-3.50 USD", Reversal: true, Reverses: 41, Note: "refund"},
		},
		LinePages: templates.Pager{Page: 1, Pages: 3, Total: 207, NextURL: "/usage?month=2026-01&page=2"}, CSVURL: "/usage.csv?month=2026-01"}
	doc := render(t, templates.UsagePage(userPage("Usage", "/usage"), v))
	// A reversal names the line it cancels.
	if got := doc.Find(testid("line-reverses")).Text(); got != "reverses line #41" {
		t.Errorf("reversal names %q, want the line it reverses", got)
	}
	// Rounded lines need not add up to the exact total: the page says so
	// (a finance reader summing them by hand found a cent missing).
	if note := doc.Find(testid("statement-rounding")).Text(); !strings.Contains(note, "the totals are the exact sums") {
		t.Errorf("rounding note %q", note)
	}

	gpus := doc.Find(testid("quota-bar-gpus"))
	if gpus.Length() != 1 {
		t.Fatalf("gpu bar: %d", gpus.Length())
	}
	if u, _ := gpus.Attr("data-used"); u != "2" {
		t.Errorf("data-used %q", u)
	}
	if l, _ := gpus.Attr("data-limit"); l != "4" {
		t.Errorf("data-limit %q", l)
	}
	if v, _ := gpus.Find("progress").Attr("value"); v != "50" {
		t.Errorf("gpu bar progress value %q", v)
	}
	if m, _ := gpus.Find("progress").Attr("max"); m != "100" {
		t.Errorf("gpu bar progress max %q", m)
	}
	if gpus.Find("[style]").Length() != 0 {
		t.Error("inline styles are blocked by the CSP: bars must not use them")
	}
	if !doc.Find(testid("quota-bar-spend")).HasClass("level-warn") {
		t.Error("the spend bar at 85% is not marked as a warning")
	}
	wb := doc.Find(testid("quota-bar-workbenches"))
	if wb.Find("progress").Length() != 0 || !strings.Contains(wb.Text(), "unlimited") {
		t.Errorf("an unlimited bar should show no progress and say unlimited: %q", squash(wb.Text()))
	}
	if w := doc.Find(testid("quota-warning")); w.Length() != 1 || !strings.Contains(w.Text(), "80%") {
		t.Errorf("warning banner: %d %q", w.Length(), w.Text())
	}
	if doc.Find(testid("quota-limit-reached")).Length() != 0 {
		t.Error("limit-reached banner without a limit reached")
	}
	if rows := doc.Find(testid("statement-row")); rows.Length() != 2 || !rows.Eq(1).HasClass("reversal") {
		t.Errorf("statement rows: %d, second reversal %v", rows.Length(), rows.Eq(1).HasClass("reversal"))
	}
	if s := squash(doc.Find(testid("statement-row")).First().Text()); !strings.Contains(s, "3.50 / GPU-hour") || !strings.Contains(s, "NVIDIA H100") {
		t.Errorf("first line %q", s)
	}
	if tot := strings.TrimSpace(doc.Find(testid("statement-total")).Text()); tot != "3.50 USD" {
		t.Errorf("total %q", tot)
	}
	if a, _ := doc.Find(testid("usage-csv")).Attr("href"); a != "/usage.csv?month=2026-01" {
		t.Errorf("csv link %q", a)
	}
	if !strings.Contains(doc.Find(testid("pager-info")).Text(), "Page 1 of 3 (207 in all)") || doc.Find(testid("pager-next")).AttrOr("href", "") != "/usage?month=2026-01&page=2" {
		t.Error("pager of the lines not shown")
	}
	if !strings.Contains(doc.Find(testid("statement-pending")).Text(), "0.42 USD") {
		t.Error("pending amount not shown")
	}
	if v, _ := doc.Find(`[data-testid=month-picker] input[name=month]`).Attr("value"); v != "2026-01" {
		t.Errorf("month picker value %q", v)
	}
	if doc.Find(testid("month-next")).Length() != 0 {
		t.Error("the current month offers a next month")
	}
	if a := doc.Find(`nav.mainnav a.active`); strings.TrimSpace(a.Text()) != "Usage" {
		t.Errorf("active nav item %q", a.Text())
	}

	// An empty month says so; a reached limit shows its reason.
	doc = render(t, templates.UsagePage(userPage("Usage", "/usage"), templates.UsageView{LimitReached: "quota exceeded: the monthly budget is used up",
		Month: templates.MonthNav{Label: "March 2025", Next: "/usage?month=2025-04"}}))
	if doc.Find(testid("statement-empty")).Length() != 1 || doc.Find(testid("statement-lines")).Length() != 0 {
		t.Error("an empty statement should say so and show no lines table")
	}
	if !strings.Contains(doc.Find(testid("quota-limit-reached")).Text(), "budget is used up") {
		t.Error("limit reached banner missing")
	}
	if doc.Find(testid("month-next")).Length() != 1 {
		t.Error("a past month offers no next month")
	}
}

func TestAdminQuotasPageInlineFormsAndErrors(t *testing.T) {
	v := templates.QuotaConsoleView{Currency: "EUR", Rows: []templates.QuotaRow{
		{Scope: "default", Name: "default", Form: templates.QuotaForm{ID: "quota-default", Action: "/admin/quotas/default", MaxGPUs: "2"}},
		{Scope: "group", Name: "ml team", Detail: "2 members", Form: templates.QuotaForm{ID: "quota-group-1", Action: "/admin/quotas/groups/ml%20team",
			Inherited: map[string]string{"max_gpus": "default: 2"}}},
		{Scope: "user", Name: "ada", Detail: "groups: ml team",
			Bars: []templates.QuotaBar{{Key: "gpus", Label: "GPUs in use", Used: "1", Limit: "4", DataUsed: "1", DataLimit: "4", Percent: 25, Level: "ok"}},
			Form: templates.QuotaForm{ID: "quota-user-2", Action: "/admin/quotas/users/ada", Budget: "12.3.4",
				Errors: templates.FormErrors{"budget": "enter an amount such as 12 or 12.50"}}},
	}}
	doc := render(t, templates.AdminQuotasPage(adminPage("Quotas", "/admin/quotas"), v))

	rows := doc.Find(testid("quota-row"))
	if rows.Length() != 3 {
		t.Fatalf("rows %d", rows.Length())
	}
	def := doc.Find(`[data-testid=quota-row][data-scope=default]`)
	if a, _ := def.Find("form").Attr("action"); a != "/admin/quotas/default" {
		t.Errorf("default form action %q", a)
	}
	if val, _ := def.Find(`input[name=max_gpus]`).Attr("value"); val != "2" {
		t.Errorf("default max_gpus %q", val)
	}
	if ph, _ := def.Find(`input[name=max_workbenches]`).Attr("placeholder"); ph != "unlimited" {
		t.Errorf("default placeholder %q", ph)
	}
	grp := doc.Find(`[data-testid=quota-row][data-name="ml team"]`)
	if ph, _ := grp.Find(`input[name=max_gpus]`).Attr("placeholder"); ph != "default: 2" {
		t.Errorf("group placeholder %q", ph)
	}
	if a, _ := grp.Find("form").Attr("action"); a != "/admin/quotas/groups/ml%20team" {
		t.Errorf("group form action %q", a)
	}
	user := doc.Find(`[data-testid=quota-row][data-name=ada]`)
	if id, _ := user.Attr("id"); id != "quota-user-2" || !user.HasClass("has-error") {
		t.Errorf("user row id %q, has-error %v", id, user.HasClass("has-error"))
	}
	if l, _ := user.Find(testid("quota-bar-gpus")).Attr("data-limit"); l != "4" {
		t.Errorf("user bar limit %q", l)
	}
	// The error sits next to the field it concerns, inside that row's form.
	if e := user.Find(`label:has(input[name=budget]) ` + testid("error-budget")); e.Length() != 1 {
		t.Errorf("budget error beside its field: %d", e.Length())
	}
	if val, _ := user.Find(`input[name=budget]`).Attr("value"); val != "12.3.4" {
		t.Errorf("the bad input is not kept: %q", val)
	}
	if doc.Find(testid("error-budget")).Length() != 1 {
		t.Error("the error shows on other rows too")
	}
	for _, f := range []string{"max_gpus", "max_workbenches", "gpu_hours_per_month", "budget", "max_runtime_hours", "allowed_images", "allowed_flavors"} {
		if n := user.Find(`input[name=` + f + `]`).Length(); n != 1 {
			t.Errorf("field %s: %d inputs", f, n)
		}
	}
	if !strings.Contains(doc.Find("thead").Text()+user.Text(), "EUR") {
		t.Error("the budget field does not name the currency")
	}
	if a := doc.Find(`nav.tabs a.active`); strings.TrimSpace(a.Text()) != "Quotas" {
		t.Errorf("active admin tab %q", a.Text())
	}
}

func TestAdminPricesPage(t *testing.T) {
	v := templates.PricesView{Currency: "USD", GPUModels: []string{"NVIDIA H100 80GB HBM3"}, Now: "2026-01-02T10:00",
		Current: []templates.PriceRow{
			{Resource: "gpu", GPUModel: "NVIDIA H100 80GB HBM3", Rate: "3.00 USD / GPU-hour", RateMicros: 3_000_000, EffectiveFrom: "always", IsDefault: true, InForce: true,
				Next: "4.00 from 2026-02-01 00:00 UTC"},
			{Resource: "cpu", Rate: "0.02 USD / core-hour", RateMicros: 20_000, EffectiveFrom: "2026-01-01 00:00 UTC", InForce: true},
		},
		History: []templates.PriceRow{
			{Resource: "gpu", GPUModel: "NVIDIA H100 80GB HBM3", RateMicros: 4_000_000, Scheduled: true},
			{Resource: "gpu", GPUModel: "NVIDIA H100 80GB HBM3", RateMicros: 3_000_000, IsDefault: true, InForce: true},
			{Resource: "cpu", RateMicros: 20_000, InForce: true},
		},
		Form: templates.PriceForm{Resource: "cpu", Rate: "-1", Errors: templates.FormErrors{"rate": "enter an amount such as 12 or 12.50"}}}
	doc := render(t, templates.AdminPricesPage(adminPage("Prices", "/admin/prices"), v))

	cur := doc.Find(testid("price-row"))
	if cur.Length() != 2 {
		t.Fatalf("current rows %d", cur.Length())
	}
	if cur.Eq(0).Find(testid("price-default")).Length() != 1 || cur.Eq(1).Find(testid("price-default")).Length() != 0 {
		t.Error("only the seeded default is marked for review")
	}
	if !strings.Contains(cur.Eq(0).Text(), "default — review") || !strings.Contains(cur.Eq(0).Text(), "4.00 from") {
		t.Errorf("gpu row %q", squash(cur.Eq(0).Text()))
	}
	if m, _ := cur.Eq(1).Attr("data-rate-micros"); m != "20000" {
		t.Errorf("cpu rate micros %q", m)
	}
	if n := doc.Find(testid("price-history-row")).Length(); n != 3 {
		t.Errorf("history rows %d", n)
	}
	if doc.Find(testid("price-scheduled")).Length() != 1 {
		t.Error("the scheduled version is not marked")
	}
	form := doc.Find(testid("price-form"))
	if a, _ := form.Attr("action"); a != "/admin/prices" {
		t.Errorf("form action %q", a)
	}
	if sel, _ := form.Find(`select[name=resource] option[selected]`).Attr("value"); sel != "cpu" {
		t.Errorf("selected resource %q", sel)
	}
	if form.Find(`select[name=gpu_model] option[value="NVIDIA H100 80GB HBM3"]`).Length() != 1 {
		t.Error("the pool's GPU model is not offered")
	}
	if typ, _ := form.Find(`input[name=effective_from]`).Attr("type"); typ != "datetime-local" {
		t.Errorf("effective_from type %q", typ)
	}
	if doc.Find(testid("error-rate")).Length() != 1 {
		t.Error("rate error missing")
	}
	if val, _ := form.Find(`input[name=rate]`).Attr("value"); val != "-1" {
		t.Errorf("rate input not kept: %q", val)
	}
}

func TestAdminBillingPage(t *testing.T) {
	v := templates.BillingView{Currency: "USD", GroupBy: "group", GroupLabel: "Group",
		Month: templates.MonthNav{Action: "/admin/billing", Value: "2026-01", Label: "January 2026",
			Hidden: []templates.MonthParam{{Name: "group_by", Value: "group"}}},
		Groupings: []templates.ChoiceLink{{Value: "user", Label: "User", Href: "/admin/billing?group_by=user"},
			{Value: "group", Label: "Group", Href: "/admin/billing?group_by=group", Active: true}},
		Rows: []templates.BillingRow{{Key: "ml", Label: "ml", GPUHours: "2.00", Amount: "7.00 USD", Share: "70%"},
			{Key: "", Label: "no group", GPUHours: "0.00", Amount: "3.00 USD", Share: "30%"}},
		Total: "10.00 USD", TotalHours: "2.00", CSVURL: "/admin/billing.csv?group_by=group&month=2026-01"}
	doc := render(t, templates.AdminBillingPage(adminPage("Billing", "/admin/billing"), v))
	if n := doc.Find(testid("billing-row")).Length(); n != 2 {
		t.Fatalf("rows %d", n)
	}
	if k, _ := doc.Find(testid("billing-row")).Eq(1).Attr("data-key"); k != "" || !strings.Contains(doc.Find(testid("billing-row")).Eq(1).Text(), "no group") {
		t.Errorf("empty key row: %q", k)
	}
	if tot := strings.TrimSpace(doc.Find(testid("billing-total")).Text()); tot != "10.00 USD" {
		t.Errorf("total %q", tot)
	}
	if g, _ := doc.Find(testid("billing-table")).Attr("data-group-by"); g != "group" {
		t.Errorf("group_by %q", g)
	}
	if a := doc.Find(`[data-testid=billing-groupings] a.active`); strings.TrimSpace(a.Text()) != "Group" {
		t.Errorf("active grouping %q", a.Text())
	}
	if h, _ := doc.Find(`[data-testid=month-picker] input[name=group_by]`).Attr("value"); h != "group" {
		t.Errorf("the month picker loses group_by: %q", h)
	}
	if a, _ := doc.Find(testid("billing-csv")).Attr("href"); !strings.HasPrefix(a, "/admin/billing.csv?") {
		t.Errorf("csv link %q", a)
	}
	if a := doc.Find(`nav.tabs[aria-label=Admin] a.active`); strings.TrimSpace(a.Text()) != "Billing" {
		t.Errorf("active admin tab %q", a.Text())
	}
}
