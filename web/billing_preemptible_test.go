package web_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
	"workbench/models/pricing"
)

// The admin's billing overview and a group's statement say, beside each
// row's amount and the total, which part was billed at the preemptible tier
// ("Of which preemptible"; "—" for none), as /usage marks each line; their
// CSVs append a preemptible_micros column. ada, in lab, ran one hour
// preemptible ("spot": its GPU line at the discounted rate, its CPU line
// standard) and one hour standard ("full"). Before, both pages had sums
// only.
func TestBillingPagesSayThePreemptiblePart(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	st := p.srv.Store
	tokenFor(t, p, "ada", "user")
	ada, _ := st.UserByUsername(ctx, "ada")
	lab, err := st.CreateGroup(ctx, "lab", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AddGroupMember(ctx, lab.ID, ada.ID); err != nil {
		t.Fatal(err)
	}
	month := models.MonthStart(time.Now())
	const h100 = "NVIDIA H100 80GB HBM3"
	run := func(name, tier string, at time.Time, lines ...models.LedgerEntry) {
		wb := p.runningRecord(ada, name, models.GPUNeed{})
		iv := &models.UsageInterval{WorkbenchID: wb.ID, UserID: ada.ID, GPUModel: h100, GPUCount: 1, CPUMilli: 8000, MemoryMiB: 1024,
			Tier: tier, StartedAt: at}
		if err := st.OpenInterval(ctx, iv); err != nil {
			t.Fatal(err)
		}
		for i := range lines {
			lines[i].IdempotencyKey = fmt.Sprintf("test:%s:%s", name, lines[i].Resource)
			lines[i].UserID, lines[i].WorkbenchID, lines[i].IntervalID, lines[i].GroupName = ada.ID, wb.ID, &iv.ID, "lab"
			lines[i].PeriodStart, lines[i].PeriodEnd, lines[i].Seconds = at, at.Add(time.Hour), 3600
		}
		if _, err := st.RecordBilling(ctx, iv.ID, lines, at.Add(time.Hour), false); err != nil {
			t.Fatal(err)
		}
	}
	run("spot", pricing.TierPreemptible, month,
		models.LedgerEntry{Resource: pricing.GPU, GPUModel: h100, QuantityMilli: 1000, RateMicros: 900_000, AmountMicros: 900_000},
		models.LedgerEntry{Resource: pricing.CPU, GPUModel: h100, QuantityMilli: 8000, RateMicros: 10_000, AmountMicros: 80_000})
	run("full", "", month.Add(time.Hour),
		models.LedgerEntry{Resource: pricing.GPU, GPUModel: h100, QuantityMilli: 1000, RateMicros: 3_000_000, AmountMicros: 3_000_000})

	admin, _ := mpAdmin(t, p)
	m := month.Format("2006-01")
	// cells reads a billing table: row key → its preemptible part, and
	// the total's ("" key).
	cells := func(path, rowTestID string) map[string]string {
		t.Helper()
		res, body := p.get(admin, path)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", path, res.StatusCode)
		}
		doc := mpDoc(t, body)
		if head := doc.Find(`th:contains("Of which preemptible")`); head.Length() != 1 {
			t.Errorf("%s: %d \"Of which preemptible\" column heads, want 1", path, head.Length())
		}
		out := map[string]string{}
		doc.Find(`[data-testid=` + rowTestID + `]`).Each(func(_ int, tr *goquery.Selection) {
			out[attrOf(tr, "data-key")] = strings.TrimSpace(tr.Find(`[data-testid=billing-preemptible]`).Text())
		})
		out[""] = strings.TrimSpace(doc.Find(`[data-testid=billing-total-preemptible]`).Text())
		return out
	}
	for _, c := range []struct {
		path, row string
		want      map[string]string // key → "0.90" (contained) or "—"
	}{
		{"/admin/billing?month=" + m + "&group_by=user", "billing-row", map[string]string{"ada": "0.90", "": "0.90"}},
		{"/admin/billing?month=" + m + "&group_by=resource", "billing-row", map[string]string{"gpu": "0.90", "cpu": "—", "": "0.90"}},
		{"/admin/billing?month=" + m + "&group_by=workbench", "billing-row", map[string]string{"ada/spot": "0.90", "ada/full": "—", "": "0.90"}},
		{fmt.Sprintf("/groups/%d/billing?month=%s&group_by=resource", lab.ID, m), "group-billing-row", map[string]string{"gpu": "0.90", "cpu": "—", "": "0.90"}},
		{fmt.Sprintf("/groups/%d/billing?month=%s&group_by=workbench", lab.ID, m), "group-billing-row", map[string]string{"ada/spot": "0.90", "ada/full": "—", "": "0.90"}},
	} {
		got := cells(c.path, c.row)
		for k, want := range c.want {
			if g, ok := got[k]; !ok || (want == "—" && g != want) || (want != "—" && (!strings.Contains(g, want) || strings.Contains(g, "3.90"))) {
				t.Errorf("%s: row %q preemptible %q (present %v), want %q (all: %v)", c.path, k, g, ok, want, got)
			}
		}
	}

	for _, path := range []string{"/admin/billing.csv?month=" + m + "&group_by=resource", fmt.Sprintf("/groups/%d/billing.csv?month=%s&group_by=resource", lab.ID, m)} {
		res, body := p.get(admin, path)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", path, res.StatusCode)
		}
		recs, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(body, "\ufeff"))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		last := len(recs[0]) - 1
		if recs[0][last] != "preemptible_micros" {
			t.Fatalf("%s: header %q, want preemptible_micros last", path, recs[0])
		}
		key := 1
		if strings.HasPrefix(path, "/groups/") {
			key = 2
		}
		for _, r := range recs[1:] {
			want := map[string]string{"gpu": "900000", "cpu": "0"}[r[key]]
			if r[last] != want {
				t.Errorf("%s: %s preemptible_micros %q, want %q", path, r[key], r[last], want)
			}
		}
	}
}
