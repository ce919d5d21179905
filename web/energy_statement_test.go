package web_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// energyFixture gives ada a workbench with a usage interval at the start of
// this month and books mJ of measured GPU energy to it through the rollup
// table, as the sampler's rollup does.
func energyFixture(t *testing.T, p *testPortal, mJ int64) *models.Workbench {
	t.Helper()
	ctx := context.Background()
	s := p.srv.Store
	tokenFor(t, p, "ada", "user")
	ada, err := s.UserByUsername(ctx, "ada")
	if err != nil {
		t.Fatal(err)
	}
	imgs, _ := s.ListImages(ctx, false)
	fls, _ := s.ListFlavors(ctx, false)
	wb := &models.Workbench{Name: "llm-train", OwnerID: ada.ID, ImageID: imgs[0].ID, FlavorID: fls[0].ID, Token: "t"}
	if err := s.CreateWorkbench(ctx, wb, models.GPUNeed{}, nil); err != nil {
		t.Fatal(err)
	}
	start := models.MonthStart(time.Now())
	iv := &models.UsageInterval{WorkbenchID: wb.ID, UserID: ada.ID, GPUModel: "NVIDIA H100 80GB HBM3", GPUCount: 1, StartedAt: start}
	if err := s.OpenInterval(ctx, iv); err != nil {
		t.Fatal(err)
	}
	if mJ == 0 {
		return wb
	}
	half := mJ / 2
	if err := s.SaveGPUMinutes(ctx, []models.GPUMinute{
		{GPUUUID: "GPU-x", Minute: start.Unix(), Samples: 4, WorkbenchID: wb.ID, EnergyMJ: half},
		{GPUUUID: "GPU-x", Minute: start.Add(time.Minute).Unix(), Samples: 4, WorkbenchID: wb.ID, EnergyMJ: mJ - half},
	}); err != nil {
		t.Fatal(err)
	}
	return wb
}

// Statements show the measured kWh per workbench; with an electricity
// price set by an admin (form, audited), an informational energy cost in
// exact micro-units; the price form refuses bad input and keeps it shown.
func TestStatementsShowMeasuredEnergy(t *testing.T) {
	p := newPortal(t)
	admin, adminTok := mpAdmin(t, p)
	energyFixture(t, p, 7_200_000_000) // 2 kWh
	month := time.Now().UTC().Format("2006-01")

	ada := p.client()
	p.login(ada, "ada", "ada-password")
	_, body := p.get(ada, "/usage")
	doc := mpDoc(t, body)
	row := doc.Find(`[data-testid=statement-summary] [data-testid=summary-row]`)
	if row.Length() != 1 || !strings.Contains(row.Text(), "llm-train") || strings.TrimSpace(row.Find(`[data-testid=summary-kwh]`).Text()) != "2.000" {
		t.Fatalf("usage summary without a price: %q", row.Text())
	}
	if doc.Find(`[data-testid=summary-energy-cost]`).Length() != 0 {
		t.Error("an energy cost column without an electricity price")
	}

	// A bad price is explained on the page and nothing is stored.
	code, _, page := mpPost(t, p, admin, "/admin/billing/electricity-price", url.Values{"price": {"cheap"}})
	if code != http.StatusBadRequest || !strings.Contains(mpDoc(t, page).Find(`[data-testid=electricity-error]`).Text(), "amount") {
		t.Fatalf("bad price: %d", code)
	}
	if v, _ := mpDoc(t, page).Find(`[data-testid=electricity-input]`).Attr("value"); v != "cheap" {
		t.Errorf("the typed price was not shown back: %q", v)
	}
	code, loc, _ := mpPost(t, p, admin, "/admin/billing/electricity-price", url.Values{"price": {"0.155"}})
	if code != http.StatusSeeOther || !strings.Contains(loc, "done=electricity") {
		t.Fatalf("save price: %d %q", code, loc)
	}
	if st, j := p.api("GET", "/api/v1/admin/electricity-price", adminTok, ""); st != 200 || j["price_per_kwh_micros"] != float64(155_000) {
		t.Fatalf("API price: %d %v", st, j)
	}

	_, body = p.get(ada, "/usage")
	doc = mpDoc(t, body)
	if c := strings.TrimSpace(doc.Find(`[data-testid=summary-energy-cost]`).Text()); c != "0.31 USD" {
		t.Errorf("energy cost on /usage %q, want 0.31 USD (2 kWh at 0.155)", c)
	}
	if c := strings.TrimSpace(doc.Find(`[data-testid=statement-total]`).Text()); c != "0.00 USD" {
		t.Errorf("the energy cost leaked into the charged total: %q", c)
	}

	_, body = p.get(admin, "/admin/billing?group_by=workbench&month="+month)
	doc = mpDoc(t, body)
	brow := doc.Find(`[data-testid=billing-row][data-key="ada/llm-train"]`) // everyone's workbenches are keyed owner/name
	if strings.TrimSpace(brow.Find(`[data-testid=billing-kwh]`).Text()) != "2.000" ||
		strings.TrimSpace(brow.Find(`[data-testid=billing-energy-cost]`).Text()) != "0.31 USD" {
		t.Errorf("admin billing row: %q", brow.Text())
	}
	if v, _ := doc.Find(`[data-testid=electricity-input]`).Attr("value"); v != "0.155" {
		t.Errorf("stored price shown as %q", v)
	}

	res, body := p.get(admin, "/admin/billing.csv?group_by=user&month="+month)
	recs, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(body, "\ufeff"))).ReadAll()
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("billing csv: %d %v", res.StatusCode, err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	if len(recs) != 2 || recs[1][col["user"]] != "ada" || recs[1][col["energy_kwh"]] != "2.000" ||
		recs[1][col["energy_mj"]] != "7200000000" || recs[1][col["energy_cost_micros"]] != "310000" {
		t.Errorf("billing csv: %v", recs)
	}

	_, body = p.get(ada, "/usage-summary.csv?month="+month)
	recs, _ = csv.NewReader(strings.NewReader(strings.TrimPrefix(body, "\ufeff"))).ReadAll()
	if len(recs) != 2 || recs[1][1] != "llm-train" || recs[1][8] != "310000" {
		t.Errorf("usage summary csv: %v", recs)
	}

	adaTok := tokenFor(t, p, "ada", "user")
	st, j := p.api("GET", "/api/v1/usage?group_by=workbench", adaTok, "")
	items, _ := j["items"].([]any)
	if st != 200 || len(items) != 1 {
		t.Fatalf("API usage: %d %v", st, j)
	}
	it := items[0].(map[string]any)
	if it["energy_mj"] != float64(7_200_000_000) || it["energy_cost_micros"] != float64(310_000) {
		t.Errorf("API usage item %v", it)
	}

	// Removing the price removes the cost column again.
	if code, _, _ := mpPost(t, p, admin, "/admin/billing/electricity-price", url.Values{"price": {""}}); code != http.StatusSeeOther {
		t.Fatalf("clear price: %d", code)
	}
	_, body = p.get(ada, "/usage")
	if mpDoc(t, body).Find(`[data-testid=summary-energy-cost]`).Length() != 0 {
		t.Error("a cost column after the price was removed")
	}
}
