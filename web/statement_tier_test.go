package web_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"workbench/models"
	"workbench/models/pricing"
)

// tierFixture bills ada, this month, one hour of a preemptible run of
// "spot" (its GPU line at the discounted rate and its CPU line) and one
// hour of a standard run of "full", and credits her: the lines keyed by
// what they are.
func tierFixture(t *testing.T, p *testPortal) (ada *models.User, ids map[string]int64) {
	t.Helper()
	ctx := context.Background()
	tokenFor(t, p, "ada", "user")
	ada, _ = p.srv.Store.UserByUsername(ctx, "ada")
	month := models.MonthStart(time.Now())
	const h100 = "NVIDIA H100 80GB HBM3"
	run := func(name, tier string, at time.Time, lines ...models.LedgerEntry) {
		wb := p.runningRecord(ada, name, models.GPUNeed{})
		iv := &models.UsageInterval{WorkbenchID: wb.ID, UserID: ada.ID, GPUModel: h100, GPUCount: 1, CPUMilli: 8000, MemoryMiB: 1024,
			Tier: tier, StartedAt: at}
		if err := p.srv.Store.OpenInterval(ctx, iv); err != nil {
			t.Fatal(err)
		}
		for i := range lines {
			lines[i].IdempotencyKey = fmt.Sprintf("test:%s:%s", name, lines[i].Resource)
			lines[i].UserID, lines[i].WorkbenchID, lines[i].IntervalID = ada.ID, wb.ID, &iv.ID
			lines[i].PeriodStart, lines[i].PeriodEnd, lines[i].Seconds = at, at.Add(time.Hour), 3600
		}
		if _, err := p.srv.Store.RecordBilling(ctx, iv.ID, lines, at.Add(time.Hour), false); err != nil {
			t.Fatal(err)
		}
	}
	run("spot", pricing.TierPreemptible, month,
		models.LedgerEntry{Resource: pricing.GPU, GPUModel: h100, QuantityMilli: 1000, RateMicros: 900_000, AmountMicros: 900_000},
		models.LedgerEntry{Resource: pricing.CPU, GPUModel: h100, QuantityMilli: 8000, RateMicros: 10_000, AmountMicros: 80_000})
	run("full", "", month.Add(time.Hour),
		models.LedgerEntry{Resource: pricing.GPU, GPUModel: h100, QuantityMilli: 1000, RateMicros: 3_000_000, AmountMicros: 3_000_000})
	if _, err := p.srv.Store.Credit(ctx, ada.ID, 500_000, "", "node down", "root"); err != nil {
		t.Fatal(err)
	}
	lines, err := p.srv.Store.Statement(ctx, ada.ID, month, month.AddDate(0, 1, 0))
	if err != nil {
		t.Fatal(err)
	}
	ids = map[string]int64{}
	for _, l := range lines {
		if l.Resource == models.ResourceCredit {
			ids["credit"] = l.ID
		} else {
			ids[strings.TrimPrefix(l.IdempotencyKey, "test:")] = l.ID
		}
	}
	for _, k := range []string{"spot:gpu", "spot:cpu", "full:gpu", "credit"} {
		if ids[k] == 0 {
			t.Fatalf("no %s line among %v", k, ids)
		}
	}
	return ada, ids
}

// The statement says which lines were billed at the preemptible tier: on
// /usage a "preemptible" badge beside the rate (words, not a colour; in
// Chinese for a Chinese reader) on the preemptible run's GPU line only —
// not its CPU line (never discounted), a standard run's or a credit; in
// /usage.csv a tier column appended after the columns it had, in their
// order; in GET /api/v1/usage/lines and a reversal's answer a tier field.
// Before, "0.90 / GPU-hour" and "3.00 / GPU-hour" for one flavor said
// nothing of why.
func TestStatementSaysWhichLinesArePreemptible(t *testing.T) {
	p := newPortal(t)
	_, ids := tierFixture(t, p)
	month := models.MonthStart(time.Now()).Format("2006-01")
	zh, en := p.readersSignedIn("ada", "ada-password")
	for _, c := range []struct {
		client *http.Client
		word   string
	}{{en, "preemptible"}, {zh, "可抢占"}} {
		res, body := p.get(c.client, "/usage")
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET /usage: %d", res.StatusCode)
		}
		doc := mpDoc(t, body)
		for k, id := range ids {
			badge := doc.Find(fmt.Sprintf(`[data-testid=statement-row][data-line-id="%d"] [data-testid=line-preemptible]`, id))
			if want := k == "spot:gpu"; (badge.Length() == 1) != want {
				t.Errorf("%s line: preemptible badge %v, want %v", k, badge.Length() == 1, want)
			} else if want && strings.TrimSpace(badge.Text()) != c.word {
				t.Errorf("%s line's badge reads %q, want %q", k, badge.Text(), c.word)
			}
		}
	}

	res, body := p.get(en, "/usage.csv?month="+month)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /usage.csv: %d", res.StatusCode)
	}
	recs, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(body, "\ufeff"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// The columns scripts read by position stay where they were.
	before := []string{"period_start", "period_end", "workbench", "workbench_id", "resource", "gpu_model",
		"seconds", "quantity", "rate", "amount", "quantity_milli", "rate_micros", "amount_micros", "currency", "note",
		"id", "reverses", "created_by"}
	if !slices.Equal(recs[0], append(before, "tier")) {
		t.Fatalf("csv header %q, want the old columns then tier", recs[0])
	}
	tierCol, idCol := len(before), slices.Index(before, "id")
	tiers := map[string]string{}
	for _, r := range recs[1:] {
		tiers[r[idCol]] = r[tierCol]
	}
	for k, id := range ids {
		want := ""
		if k == "spot:gpu" {
			want = pricing.TierPreemptible
		}
		if got, ok := tiers[fmt.Sprint(id)]; !ok || got != want {
			t.Errorf("csv: %s line's tier %q (listed %v), want %q", k, got, ok, want)
		}
	}

	tok := tokenFor(t, p, "ada", "user")
	code, page := p.api("GET", "/api/v1/usage/lines?month="+month, tok, "")
	if code != http.StatusOK {
		t.Fatalf("GET /api/v1/usage/lines: %d", code)
	}
	items, _ := page["items"].([]any)
	if len(items) != len(ids) {
		t.Fatalf("api: %d lines, want %d: %v", len(items), len(ids), page)
	}
	for _, it := range items {
		line := it.(map[string]any)
		id := int64(line["id"].(float64))
		want := ""
		if id == ids["spot:gpu"] {
			want = pricing.TierPreemptible
		}
		// Present on every line ("" for standard and for no tier).
		if got, ok := line["tier"]; !ok || got != want {
			t.Errorf("api: line %d has tier %v (present %v), want %q", id, got, ok, want)
		}
	}

	_, adminTok := mpAdmin(t, p)
	code, rev := p.apiBytes("POST", "/api/v1/admin/ledger/reversals", adminTok, fmt.Sprintf(`{"ids": [%d], "reason": "wrong node"}`, ids["spot:gpu"]))
	if code != http.StatusCreated || !strings.Contains(string(rev), `"tier":"preemptible"`) {
		t.Errorf("the reversal of a preemptible line: %d %s, want its tier", code, rev)
	}
}
