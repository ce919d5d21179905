package web_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
)

// Corrections (SPEC §6 rule 13): an admin credits a user and reverses
// specific ledger lines with a reason, through the API and the billing
// page. Each is a new line; the originals stay; the user's statement and
// CSV show them; the audit log records who did it; bad input changes
// nothing; users cannot correct.
func TestLedgerCorrections(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	adaTok := tokenFor(t, p, "ada", "user")
	ada, _ := p.srv.Store.UserByUsername(ctx, "ada")
	month := models.MonthStart(time.Now())
	mpSeedLines(t, p, ada.ID, "", month, 1_234_567, 2_000_001, 500_000)
	orig, err := p.srv.Store.Statement(ctx, ada.ID, month, month.AddDate(0, 1, 0))
	if err != nil || len(orig) != 3 {
		t.Fatalf("seeded lines %+v (%v)", orig, err)
	}
	adminC, adminTok := mpAdmin(t, p)
	total := func() int64 {
		m, err := p.srv.Store.MonthTotals(ctx, ada.ID, month)
		if err != nil {
			t.Fatal(err)
		}
		return m.AmountMicros
	}
	start := total()

	// A user cannot issue corrections.
	if code, _ := p.api("POST", "/api/v1/admin/ledger/credits", adaTok, `{"user":"ada","amount_micros":1,"reason":"me"}`); code != http.StatusForbidden {
		t.Fatalf("a user's credit: %d, want 403", code)
	}
	// Bad input: 400, nothing appended.
	for _, bad := range []struct{ path, body string }{
		{"/api/v1/admin/ledger/credits", `{"user":"ada","amount_micros":1000000,"reason":"  "}`},
		{"/api/v1/admin/ledger/credits", `{"user":"ada","amount_micros":-5,"reason":"x"}`},
		{"/api/v1/admin/ledger/credits", `{"user":"nobody","amount_micros":5,"reason":"x"}`},
		{"/api/v1/admin/ledger/reversals", fmt.Sprintf(`{"ids":[%d, 999999],"reason":"x"}`, orig[0].ID)},
		{"/api/v1/admin/ledger/reversals", fmt.Sprintf(`{"ids":[%d],"reason":""}`, orig[0].ID)},
	} {
		code, body := p.api("POST", bad.path, adminTok, bad.body)
		if code != http.StatusBadRequest {
			t.Errorf("POST %s %s: %d %v; want 400", bad.path, bad.body, code, body)
		}
	}
	if got := total(); got != start {
		t.Fatalf("refused corrections changed the month: %d → %d", start, got)
	}

	// API: a credit and a reversal of one line.
	code, credit := p.api("POST", "/api/v1/admin/ledger/credits", adminTok, `{"user":"ada","amount_micros":750000,"reason":"GPU 3 was faulty on Monday"}`)
	if code != http.StatusCreated || credit["amount_micros"] != float64(-750_000) || credit["resource"] != "credit" || credit["created_by"] != "admin" {
		t.Fatalf("credit: %d %v", code, credit)
	}
	code, rev := p.api("POST", "/api/v1/admin/ledger/reversals", adminTok, fmt.Sprintf(`{"ids":[%d],"reason":"billed twice"}`, orig[1].ID))
	if code != http.StatusCreated {
		t.Fatalf("reversal: %d %v", code, rev)
	}
	if code, _ := p.api("POST", "/api/v1/admin/ledger/reversals", adminTok, fmt.Sprintf(`{"ids":[%d],"reason":"again"}`, orig[1].ID)); code != http.StatusConflict {
		t.Fatalf("a second reversal of one line: %d, want 409", code)
	}
	if got, want := total(), start-750_000-2_000_001; got != want {
		t.Fatalf("month after credit and reversal: %d, want %d", got, want)
	}

	// The billing page: a credit by form, and a reversal with a bad id
	// that shows the error and appends nothing.
	code, loc, _ := mpPost(t, p, adminC, "/admin/billing/credit", url.Values{"user": {"ada"}, "amount": {"0.25"}, "reason": {"goodwill"}})
	if code != http.StatusSeeOther || !strings.HasPrefix(loc, "/admin/billing") {
		t.Fatalf("credit form: %d → %q", code, loc)
	}
	code, _, body := mpPost(t, p, adminC, "/admin/billing/reverse", url.Values{"ids": {"abc"}, "reason": {"x"}})
	if msg := mpDoc(t, body).Find(`[data-testid=reverse-form] [data-testid=error-ids]`).Text(); code != http.StatusBadRequest || !strings.Contains(msg, "ledger line ids") {
		t.Fatalf("bad reversal form: %d, error %q; want 400 saying why", code, msg)
	}
	code, loc, _ = mpPost(t, p, adminC, "/admin/billing/reverse", url.Values{"ids": {fmt.Sprint(orig[2].ID)}, "reason": {"test run"}})
	if code != http.StatusSeeOther {
		t.Fatalf("reverse form: %d → %q", code, loc)
	}
	if _, page := p.get(adminC, loc); !strings.Contains(page, "reversing lines were appended") {
		t.Error("no confirmation after the reversal")
	}
	if got, want := total(), start-750_000-2_000_001-250_000-500_000; got != want {
		t.Fatalf("month after the page's corrections: %d, want %d", got, want)
	}

	// The originals are all still there; the corrections are new lines.
	after, _ := p.srv.Store.Statement(ctx, ada.ID, month, month.AddDate(0, 1, 0))
	if len(after) != 7 {
		t.Fatalf("%d lines after 4 corrections of 3, want 7", len(after))
	}
	for _, o := range orig {
		l, err := p.srv.Store.LedgerLine(ctx, o.ID)
		if err != nil || l.AmountMicros != o.AmountMicros {
			t.Fatalf("original line %d changed: %+v (%v)", o.ID, l, err)
		}
	}

	// Ada sees them on her statement and in her CSV.
	c := p.client()
	p.login(c, "ada", "ada-password")
	_, page := p.get(c, "/usage")
	for _, want := range []string{"GPU 3 was faulty on Monday", "billed twice", "goodwill", "test run"} {
		if !strings.Contains(page, want) {
			t.Errorf("the statement lacks the correction %q", want)
		}
	}
	// A credit line reads as money given back, not as something metered
	// ("0:00:00, 0 GiB, 0.00 / unit-hour"), and the summary names the
	// group of lines without a workbench.
	doc := mpDoc(t, page)
	var creditRows int
	doc.Find(`[data-testid=statement-row]`).Each(func(_ int, row *goquery.Selection) {
		if !strings.Contains(row.Find(`[data-testid=line-resource]`).Text(), "goodwill") {
			return
		}
		creditRows++
		cells := row.Find(`td.num`)
		if time, qty, rate := strings.TrimSpace(cells.Eq(0).Text()), strings.TrimSpace(cells.Eq(1).Text()), strings.TrimSpace(cells.Eq(2).Text()); time != "—" || qty != "—" || rate != "—" {
			t.Errorf("the credit line reads time %q, quantity %q, rate %q; want — for each", time, qty, rate)
		}
	})
	if creditRows != 1 {
		t.Errorf("%d statement rows carry the goodwill credit, want 1", creditRows)
	}
	// The spend bar nets the credits (0.75 + 0.25) and says so: a spend
	// that may read below zero is explained, and the API gives them apart.
	if note := strings.TrimSpace(doc.Find(`[data-testid=quota-bar-spend] [data-testid=quota-note]`).Text()); note != "After 1.00 USD of credits this month." {
		t.Errorf("the spend bar's note reads %q", note)
	}
	if code, me := p.api("GET", "/api/v1/me", adaTok, ""); code != http.StatusOK || me["usage"].(map[string]any)["month_credit_micros"] != float64(-1_000_000) {
		t.Errorf("/api/v1/me: %d %v; want month_credit_micros -1000000", code, me["usage"])
	}
	if !strings.Contains(doc.Find(`[data-testid=statement-summary]`).Text(), "no workbench (home storage, credits, bookings)") {
		t.Errorf("the summary does not name the lines without a workbench: %q", strings.Join(strings.Fields(doc.Find(`[data-testid=statement-summary]`).Text()), " "))
	}
	res, csvBody := p.get(c, "/usage.csv?month="+month.Format("2006-01"))
	if res.StatusCode != 200 {
		t.Fatalf("CSV: %d", res.StatusCode)
	}
	rows, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(csvBody, "\ufeff"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	var credits, reversals int
	for _, r := range rows[1:] {
		if r[col["resource"]] == "credit" && r[col["created_by"]] == "admin" {
			credits++
		}
		if r[col["reverses"]] != "" && r[col["note"]] != "" {
			reversals++
		}
	}
	if credits != 2 || reversals != 2 {
		t.Fatalf("CSV has %d credits and %d reversals, want 2 and 2:\n%s", credits, reversals, csvBody)
	}

	// Audited: who, what, why.
	entries, _ := p.srv.Store.ListAudit(ctx, 50)
	n := 0
	for _, e := range entries {
		if (e.Action == "ledger.credit" || e.Action == "ledger.reverse") && e.Actor == "admin" {
			n++
		}
		// A credit's target names the user as the quota's do
		// (user:ada), not by the row id an auditor cannot read.
		if e.Action == "ledger.credit" && !(e.Target == "user:ada") {
			t.Errorf("credit audited with target %q, want user:ada", e.Target)
		}
	}
	if n != 4 {
		t.Fatalf("%d audit entries for 4 corrections", n)
	}
}

// The credit form sent twice (a double click without JavaScript, a page
// resubmitted after a slow answer) credits once, and so does an API client
// retrying with the same Idempotency-Key; the key reused for another
// credit is refused.
func TestCreditSentTwiceCreditsOnce(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "ada", "user")
	ada, _ := p.srv.Store.UserByUsername(ctx, "ada")
	month := models.MonthStart(time.Now())
	adminC, adminTok := mpAdmin(t, p)
	credits := func() int {
		lines, err := p.srv.Store.Statement(ctx, ada.ID, month, month.AddDate(0, 1, 0))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, l := range lines {
			if l.Resource == models.ResourceCredit {
				n++
			}
		}
		return n
	}

	_, page := p.get(adminC, "/admin/billing")
	key := mpDoc(t, page).Find(`[data-testid=credit-form] input[name=key]`).AttrOr("value", "")
	if len(key) < 12 {
		t.Fatalf("the credit form carries key %q", key)
	}
	form := url.Values{"user": {"ada"}, "amount": {"2.50"}, "reason": {"double click"}, "key": {key}}
	for i := 0; i < 2; i++ {
		if code, loc, _ := mpPost(t, p, adminC, "/admin/billing/credit", form); code != http.StatusSeeOther || !strings.HasPrefix(loc, "/admin/billing?done=credit") {
			t.Fatalf("credit form, submission %d: %d → %q", i+1, code, loc)
		}
	}
	if n := credits(); n != 1 {
		t.Fatalf("the same form sent twice made %d credits, want 1", n)
	}
	// Back, a changed amount, sent again: refused with a word by the
	// amount (it was a 400 with no message), the values kept and a new key,
	// so that sending it again makes this second credit.
	form.Set("amount", "1.00")
	code, _, resent := mpPost(t, p, adminC, "/admin/billing/credit", form)
	doc := mpDoc(t, resent)
	fresh := doc.Find(`[data-testid=credit-form] input[name=key]`).AttrOr("value", "")
	if code != http.StatusBadRequest || !strings.Contains(doc.Find(`[data-testid=credit-form]`).Text(), "this form already made a credit before it was changed") ||
		doc.Find(`[data-testid=credit-amount]`).AttrOr("value", "") != "1.00" || fresh == key || fresh == "" {
		t.Fatalf("a changed form sent again: %d, key %q", code, fresh)
	}
	if n := credits(); n != 1 {
		t.Fatalf("the refused form made a credit: %d", n)
	}
	form.Set("key", fresh)
	if code, loc, _ := mpPost(t, p, adminC, "/admin/billing/credit", form); code != http.StatusSeeOther || !strings.HasPrefix(loc, "/admin/billing?done=credit") {
		t.Fatalf("sent again with its new key: %d → %q", code, loc)
	}
	if n := credits(); n != 2 {
		t.Fatalf("credits after sending it again: %d, want 2", n)
	}
	// The next page is a new form: a second credit on purpose goes through.
	_, page = p.get(adminC, "/admin/billing?done=credit")
	if next := mpDoc(t, page).Find(`[data-testid=credit-form] input[name=key]`).AttrOr("value", ""); next == key || next == "" {
		t.Fatalf("the page after a credit carries key %q again", next)
	}

	send := func(key, body string) (int, map[string]any) {
		req, _ := http.NewRequest("POST", p.ts.URL+"/api/v1/admin/ledger/credits", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+adminTok)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return res.StatusCode, out
	}
	body := `{"user":"ada","amount_micros":750000,"reason":"retried"}`
	code, first := send("retry-1", body)
	if code != http.StatusCreated {
		t.Fatalf("first credit: %d %v", code, first)
	}
	code, again := send("retry-1", body)
	if code != http.StatusOK || again["id"] != first["id"] {
		t.Fatalf("the retry: %d %v, want 200 with line %v", code, again, first["id"])
	}
	// A conflict (SPEC §8): the key is well formed, and taken.
	if code, out := send("retry-1", `{"user":"ada","amount_micros":990000,"reason":"retried"}`); code != http.StatusConflict || errCode(out) != "conflict" {
		t.Fatalf("the key reused for another amount: %d %v, want 409 conflict", code, out)
	}
	if n := credits(); n != 3 {
		t.Fatalf("%d credits, want the form's two and the API's: 3", n)
	}
}
