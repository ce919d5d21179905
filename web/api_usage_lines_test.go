package web_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"workbench/handlers"
	"workbench/models"
)

// billLines writes n one-hour GPU lines of user's over the 20 hours from
// start (several lines an hour: ties of period), amounts 1.000001,
// 1.000002, … so that a line lost or read twice changes the sum.
func billLines(t *testing.T, p *testPortal, user *models.User, wbID, tag string, start time.Time, n int) {
	t.Helper()
	var lines []models.LedgerEntry
	for i := range n {
		at := start.Add(time.Duration(i%20) * time.Hour) // ties: 20 hours, several lines each
		lines = append(lines, models.LedgerEntry{IdempotencyKey: fmt.Sprintf("test:%s:%d", tag, i), UserID: user.ID,
			WorkbenchID: wbID, Resource: "gpu", GPUModel: "NVIDIA H100 80GB HBM3", PeriodStart: at, PeriodEnd: at.Add(time.Hour),
			Seconds: 3600, QuantityMilli: 1000, RateMicros: 1_000_000, AmountMicros: 1_000_000 + int64(i+1)})
	}
	if _, err := p.srv.Store.RecordBilling(context.Background(), 0, lines, start, true); err != nil {
		t.Fatal(err)
	}
}

// usageTotal is GET /api/v1/usage's total_micros for path's range and user.
func usageTotal(t *testing.T, p *testPortal, token, path string) (int64, string) {
	t.Helper()
	var u handlers.APIUsage
	if code := p.strictAPI("GET", path, token, "", &u); code != http.StatusOK {
		t.Fatalf("GET %s: %d", path, code)
	}
	return u.TotalMicros, u.Currency
}

// TestAPIUsageLinesPageByCursor: a user's statement lines of this month
// come 100 a page by id over GET /api/v1/usage/lines, the next page by its
// cursor (body and Link header); a line billed during the walk comes on
// its last page; the walk's amounts add up to /api/v1/usage's total, with
// the CSV's fields (times in UTC, micros, currency, workbench, reversal
// links); another user's lines never appear. ?month= reads another month;
// an admin reads everyone's or ?user='s, each adding up to the summary.
func TestAPIUsageLinesPageByCursor(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tok := tokenFor(t, p, "ada", "user")
	bobTok := tokenFor(t, p, "bob", "user")
	admin := tokenFor(t, p, "root", "admin")
	ada, _ := p.srv.Store.UserByUsername(ctx, "ada")
	bob, _ := p.srv.Store.UserByUsername(ctx, "bob")
	wb := p.runningRecord(ada, "train", models.GPUNeed{})
	month := models.MonthStart(time.Now())
	last := month.AddDate(0, -1, 0)
	billLines(t, p, ada, wb.ID, "ada", month, 150)
	billLines(t, p, bob, "", "bob", month, 40)
	billLines(t, p, ada, wb.ID, "ada-more", month, 80) // after bob's: ada's ids are not one run
	billLines(t, p, ada, wb.ID, "ada-last", last, 5)
	credit, err := p.srv.Store.Credit(ctx, ada.ID, 2_500_000, "", "node down", "root")
	if err != nil {
		t.Fatal(err)
	}
	got, sizes := walk[handlers.APIUsageLine](t, p, tok, "/api/v1/usage/lines", func(page int) {
		if page == 1 {
			billLines(t, p, ada, wb.ID, "ada-during", month.Add(30*time.Hour), 1)
		}
	})
	if !slices.Equal(sizes, []int{100, 100, 32}) {
		t.Fatalf("page sizes %v: want 100, 100, 32 (230 lines, a credit, one billed during the walk)", sizes)
	}
	total, currency := usageTotal(t, p, tok, "/api/v1/usage")
	var sum int64
	for i, l := range got {
		sum += l.AmountMicros
		if i > 0 && l.ID <= got[i-1].ID {
			t.Fatalf("line %d after %d: not by id", l.ID, got[i-1].ID)
		}
		if l.User != "ada" {
			t.Fatalf("ada's lines hold %s's line %d", l.User, l.ID)
		}
		if l.PeriodStart.Before(month) || !l.PeriodStart.Before(month.AddDate(0, 1, 0)) {
			t.Errorf("line %d starts %s, not this month", l.ID, l.PeriodStart)
		}
		if l.Currency != currency || currency == "" {
			t.Errorf("line %d in %q, the summary in %q", l.ID, l.Currency, currency)
		}
		if l.Resource == "gpu" && (l.Workbench != "train" || l.WorkbenchID != wb.ID || l.Seconds != 3600 || l.RateMicros != 1_000_000) {
			t.Errorf("line %d: %+v", l.ID, l)
		}
	}
	if sum != total {
		t.Errorf("the walk's lines add up to %d micros; /api/v1/usage says %d", sum, total)
	}
	if end := got[len(got)-2]; end.ID != credit.ID || end.AmountMicros != -2_500_000 || end.Workbench != "" || end.Note != "node down" || end.CreatedBy != "root" {
		t.Errorf("the credit, second to last: %+v", end)
	}
	// The fields as they travel: times in UTC, money integer micro-units.
	_, raw := p.apiBytes("GET", "/api/v1/usage/lines?limit=1", tok, "")
	for _, want := range []string{`"period_start":"` + month.Format("2006-01-02T15:04:05Z") + `"`, `"amount_micros":1000001,`, `"currency":"` + currency + `"`, `"user":"ada"`, `"workbench":"train"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("first line %s lacks %s", raw, want)
		}
	}

	// A reversal links both ways and keeps the sum.
	rev, err := p.srv.Store.ReverseLines(ctx, []int64{got[0].ID}, "metered twice", "root")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := walk[handlers.APIUsageLine](t, p, tok, "/api/v1/usage/lines?limit=1000", nil)
	sum = 0
	for _, l := range again {
		sum += l.AmountMicros
	}
	if total, _ = usageTotal(t, p, tok, "/api/v1/usage"); sum != total || len(again) != len(got)+1 {
		t.Errorf("after a reversal: %d lines adding up to %d, total %d", len(again), sum, total)
	}
	if f, l := again[0], again[len(again)-1]; f.ReversedBy == nil || *f.ReversedBy != rev[0].ID || l.ID != rev[0].ID || l.Reverses == nil || *l.Reverses != f.ID {
		t.Errorf("reversed line %+v, reversal %+v: not linked", f, l)
	}

	// Last month's lines, two a page; bob sees his own only.
	prev, sizes := walk[handlers.APIUsageLine](t, p, tok, "/api/v1/usage/lines?month="+last.Format("2006-01")+"&limit=2", nil)
	if !slices.Equal(sizes, []int{2, 2, 1}) || prev[0].PeriodStart.Month() != last.Month() {
		t.Errorf("last month: pages %v, first %+v", sizes, prev[0])
	}
	bobs, _ := walk[handlers.APIUsageLine](t, p, bobTok, "/api/v1/usage/lines?limit=7", nil)
	if len(bobs) != 40 || slices.ContainsFunc(bobs, func(l handlers.APIUsageLine) bool { return l.User != "bob" }) {
		t.Errorf("bob's walk: %d lines, or someone else's among them", len(bobs))
	}

	// An admin: ada's by ?user=, everyone's without; each adds up to the
	// summary's total for the same parameters.
	for _, q := range []string{"?user=ada", ""} {
		lines, _ := walk[handlers.APIUsageLine](t, p, admin, "/api/v1/usage/lines"+q, nil)
		want, _ := usageTotal(t, p, admin, "/api/v1/usage"+q)
		sum = 0
		users := map[string]int{}
		for _, l := range lines {
			sum += l.AmountMicros
			users[l.User]++
		}
		if sum != want {
			t.Errorf("admin, %q: lines add up to %d, the summary %d", q, sum, want)
		}
		if q == "" && (users["ada"] != len(again) || users["bob"] != 40) || q != "" && len(users) != 1 {
			t.Errorf("admin, %q: lines by user %v", q, users)
		}
	}
}

// TestAPIUsageLinesRefusesBadInput: a month that is no YYYY-MM is 400
// invalid_month, a bad limit or cursor as on the other lists, a parameter
// of the summary's unknown here; a user asking for another's lines is 403,
// an admin naming no such user 404 user_not_found (it was the pages'
// not_found, "go back to the list and pick it again").
func TestAPIUsageLinesRefusesBadInput(t *testing.T) {
	p := newPortal(t)
	tok := tokenFor(t, p, "ada", "user")
	tokenFor(t, p, "bob", "user")
	admin := tokenFor(t, p, "root", "admin")
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	cases := []struct {
		token, path string
		status      int
		code        string
	}{
		{tok, "/api/v1/usage/lines?month=2026-13", 400, "invalid_month"},
		{tok, "/api/v1/usage/lines?month=March", 400, "invalid_month"},
		{tok, "/api/v1/usage/lines?month=2026-1", 400, "invalid_month"},
		{tok, "/api/v1/usage/lines?month=2026-10&month=2026-11", 400, "invalid_month"},
		{tok, "/api/v1/usage/lines?limit=0", 400, "invalid_limit"},
		{tok, "/api/v1/usage/lines?limit=1001", 400, "invalid_limit"},
		{tok, "/api/v1/usage/lines?cursor=", 400, "invalid_cursor"},
		{tok, "/api/v1/usage/lines?cursor=%21%21", 400, "invalid_cursor"},
		{tok, "/api/v1/usage/lines?cursor=" + b64("notifications:12"), 400, "invalid_cursor"},
		{tok, "/api/v1/usage/lines?cursor=" + b64("usage_lines:0"), 400, "invalid_cursor"},
		{tok, "/api/v1/notifications?cursor=" + b64("usage_lines:12"), 400, "invalid_cursor"},
		{tok, "/api/v1/usage/lines?from=2026-10-01", 400, "unknown_parameter"},
		{tok, "/api/v1/usage/lines?group_by=user", 400, "unknown_parameter"},
		{tok, "/api/v1/usage/lines?user=bob", 403, "forbidden"},
		{admin, "/api/v1/usage/lines?user=nobody", 404, "user_not_found"},
		{tok, "/api/v1/usage?user=bob", 403, "forbidden"},    // the summary's rule, which the lines share
		{tok, "/api/v1/usage?user=nobody", 403, "forbidden"}, // a user learns nothing of other names
		{admin, "/api/v1/usage?user=nobody", 404, "user_not_found"},
	}
	for _, tc := range cases {
		code, body := p.api("GET", tc.path, tc.token, "")
		if code != tc.status || errCode(body) != tc.code {
			t.Errorf("GET %s: %d %v, want %d %s", tc.path, code, body, tc.status, tc.code)
		}
	}
	// An admin naming no one is told so in the API's words, not the
	// pages' "go back to the list and pick it again".
	for _, path := range []string{"/api/v1/usage/lines?user=nosuch", "/api/v1/usage?user=nosuch&group_by=user"} {
		code, body := p.api("GET", path, admin, "")
		if want := `user: no user is named "nosuch"; GET /api/v1/admin/users lists them`; code != http.StatusNotFound ||
			errCode(body) != "user_not_found" || errMessage(body) != want {
			t.Errorf("GET %s: %d %v, want 404 user_not_found %q", path, code, body, want)
		}
	}
	// Naming oneself, a month without lines, a cursor of the list itself.
	for _, path := range []string{"/api/v1/usage/lines?user=ada", "/api/v1/usage/lines?month=2020-01", "/api/v1/usage/lines?cursor=" + b64("usage_lines:12")} {
		var page handlers.APIPage[handlers.APIUsageLine]
		if code := p.strictAPI("GET", path, tok, "", &page); code != http.StatusOK || page.Items == nil || page.NextCursor != nil {
			t.Errorf("GET %s: %d %+v", path, code, page)
		}
	}
}
