package web_test

import (
	"context"
	"encoding/csv"
	"net/http"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// TestUsagePagesItsLines: a month of 250 lines shows its summary (the whole
// month) and 100 lines a page, with stable ?month=&page= links; a page past
// the end shows the last; a bad page is a 400; the CSV streams all 250.
func TestUsagePagesItsLines(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "ada", "user")
	ada, _ := p.srv.Store.UserByUsername(ctx, "ada")
	month := models.MonthStart(time.Now())
	amounts := make([]int64, 250)
	for i := range amounts {
		amounts[i] = 1_000_000
	}
	mpSeedLines(t, p, ada.ID, "", month, amounts...)
	c := p.client()
	p.login(c, "ada", "ada-password")
	m := month.Format("2006-01")

	_, body := p.get(c, "/usage?month="+m)
	doc := mpDoc(t, body)
	if n := doc.Find(`[data-testid=statement-row]`).Length(); n != 100 {
		t.Fatalf("page 1: %d rows, want 100", n)
	}
	if tot := strings.TrimSpace(doc.Find(`[data-testid=statement-total]`).Text()); tot != "250.00 USD" {
		t.Errorf("summary total %q: want the whole month's 250.00 USD", tot)
	}
	if got := doc.Find(`[data-testid=pager-info]`).Text(); !strings.Contains(got, "Page 1 of 3") || !strings.Contains(got, "250 in all") {
		t.Errorf("pager info %q", got)
	}
	if doc.Find(`[data-testid=pager-prev]`).Length() != 0 {
		t.Error("page 1 links to a previous page")
	}
	next := doc.Find(`[data-testid=pager-next]`).AttrOr("href", "")
	if next != "/usage?month="+m+"&page=2" {
		t.Fatalf("next link %q", next)
	}
	first := doc.Find(`[data-testid=statement-row]`).First().AttrOr("data-line-id", "")

	_, body = p.get(c, next)
	doc = mpDoc(t, body)
	if n := doc.Find(`[data-testid=statement-row]`).Length(); n != 100 {
		t.Fatalf("page 2: %d rows, want 100", n)
	}
	if id := doc.Find(`[data-testid=statement-row]`).First().AttrOr("data-line-id", ""); id == first {
		t.Error("page 2 starts with page 1's first line")
	}
	if prev := doc.Find(`[data-testid=pager-prev]`).AttrOr("href", ""); prev != "/usage?month="+m {
		t.Errorf("page 2 prev link %q", prev)
	}
	if nx := doc.Find(`[data-testid=pager-next]`).AttrOr("href", ""); nx != "/usage?month="+m+"&page=3" {
		t.Errorf("page 2 next link %q", nx)
	}

	_, body = p.get(c, "/usage?month="+m+"&page=9")
	doc = mpDoc(t, body)
	if n := doc.Find(`[data-testid=statement-row]`).Length(); n != 50 || !strings.Contains(doc.Find(`[data-testid=pager-info]`).Text(), "Page 3 of 3") {
		t.Errorf("past the end: %d rows, %q; want the last page's 50", n, doc.Find(`[data-testid=pager-info]`).Text())
	}
	if res, _ := p.get(c, "/usage?page=zero"); res.StatusCode != http.StatusBadRequest {
		t.Errorf("bad page: %d, want 400", res.StatusCode)
	}

	res, body := p.get(c, "/usage.csv?month="+m)
	if res.StatusCode != 200 {
		t.Fatalf("csv: %d", res.StatusCode)
	}
	recs, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(body, "\ufeff"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 251 {
		t.Fatalf("csv: %d records, want header + 250", len(recs))
	}
}
