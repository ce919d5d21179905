package web_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
)

// mpPost sends a same-origin form POST and returns the status, the
// Location and the body.
func mpPost(t *testing.T, p *testPortal, c *http.Client, path string, form url.Values) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, p.ts.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Origin", p.ts.URL)
	req.Header.Set("Referer", p.ts.URL+"/")      // a portal page's form
	req.Header.Set("Sec-Fetch-Mode", "navigate") // as a browser on https or localhost sends
	req.Header.Set("Sec-Fetch-Dest", "document")
	req.Header.Set("Sec-Fetch-User", "?1")
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Location"), string(b)
}

func mpDoc(t *testing.T, body string) *goquery.Document {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// mpAdmin returns a logged-in admin browser client and an admin API token.
func mpAdmin(t *testing.T, p *testPortal) (*http.Client, string) {
	t.Helper()
	c := p.client()
	p.loginSudo(c, "admin", adminPassword)
	return c, tokenFor(t, p, "admin", "admin")
}

// mpQuotaForm is a full console row with max_gpus and budget set.
func mpQuotaForm(maxGPUs, budget string) url.Values {
	return url.Values{"max_gpus": {maxGPUs}, "max_workbenches": {""}, "gpu_hours_per_month": {""}, "budget": {budget},
		"max_runtime_hours": {""}, "allowed_images": {""}, "allowed_flavors": {""}}
}

func mpNum(t *testing.T, m map[string]any, key string) any {
	t.Helper()
	q, _ := m["quota"].(map[string]any)
	return q[key]
}

func TestQuotaConsoleSetsUserQuota(t *testing.T) {
	p := newPortal(t)
	admin, adminTok := mpAdmin(t, p)
	tokenFor(t, p, "ada", "user")
	ada, _ := p.srv.Store.UserByUsername(context.Background(), "ada")

	res, body := p.get(admin, "/admin/quotas")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /admin/quotas: %d", res.StatusCode)
	}
	doc := mpDoc(t, body)
	row := doc.Find(`[data-testid=quota-row][data-scope=user][data-name=ada]`)
	if row.Length() != 1 {
		t.Fatalf("no console row for ada")
	}
	if l, _ := row.Find(`[data-testid=quota-bar-gpus]`).Attr("data-limit"); l != "unlimited" {
		t.Errorf("before: ada's GPU limit %q, want unlimited", l)
	}
	for _, scope := range []string{"default", "user"} {
		if doc.Find(`[data-testid=quota-row][data-scope=`+scope+`]`).Length() == 0 {
			t.Errorf("the console has no %s row", scope)
		}
	}

	// A budget finer than a cent is refused by the field (it was stored,
	// and shown rounded up).
	if code, _, body := mpPost(t, p, admin, "/admin/quotas/users/ada", url.Values{"budget": {"12.345678"}}); code != http.StatusBadRequest ||
		!strings.Contains(body, "at most 2 decimals: the currency&#39;s smallest unit") {
		t.Errorf("a budget of 12.345678: %d", code)
	}
	code, loc, _ := mpPost(t, p, admin, "/admin/quotas/users/ada", url.Values{"max_gpus": {"3"}, "max_workbenches": {"2"},
		"gpu_hours_per_month": {"100"}, "budget": {"12.34"}, "max_runtime_hours": {""},
		"allowed_images": {"PyTorch (CUDA 12), TensorFlow (CUDA) ,"}, "allowed_flavors": {""}})
	if code != http.StatusSeeOther || !strings.HasPrefix(loc, "/admin/quotas") {
		t.Fatalf("save: %d → %q", code, loc)
	}
	st, q := p.api("GET", "/api/v1/admin/quotas/users/ada", adminTok, "")
	if st != 200 {
		t.Fatalf("API: %d %v", st, q)
	}
	if mpNum(t, q, "max_gpus") != float64(3) || mpNum(t, q, "max_workbenches") != float64(2) ||
		mpNum(t, q, "gpu_hours_per_month") != float64(100) || mpNum(t, q, "budget_per_month_micros") != float64(12_340_000) {
		t.Errorf("API quota after the form: %v", q["quota"])
	}
	if mpNum(t, q, "max_runtime_hours") != nil || mpNum(t, q, "allowed_flavors") != nil {
		t.Errorf("empty fields should inherit (null): %v", q["quota"])
	}
	if imgs := fmt.Sprint(mpNum(t, q, "allowed_images")); imgs != "[PyTorch (CUDA 12) TensorFlow (CUDA)]" {
		t.Errorf("allowed images %s", imgs)
	}

	// The console shows the new values, the flash, and the bar's new limit.
	_, body = p.get(admin, "/admin/quotas")
	doc = mpDoc(t, body)
	row = doc.Find(`[data-testid=quota-row][data-name=ada]`)
	if l, _ := row.Find(`[data-testid=quota-bar-gpus]`).Attr("data-limit"); l != "3" {
		t.Errorf("after: GPU bar limit %q, want 3", l)
	}
	if v, _ := row.Find(`input[name=budget]`).Attr("value"); v != "12.34" {
		t.Errorf("budget field shows %q", v)
	}
	if f := doc.Find(`[data-testid=flash]`).Text(); !strings.Contains(f, "ada") {
		t.Errorf("flash %q", f)
	}

	// The user's own view agrees.
	adaTok := tokenFor(t, p, "ada", "user")
	if _, me := p.api("GET", "/api/v1/me", adaTok, ""); mpNum(t, me, "max_gpus") != float64(3) {
		t.Errorf("/me quota: %v", me["quota"])
	}

	// Audited with before and after.
	entries, err := p.srv.Store.ListAudit(context.Background(), 20)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range entries {
		if e.Action == "quota.set" && e.Target == "user:ada" && e.Actor == "admin" && strings.Contains(e.After, `"max_gpus":3`) {
			found = true
		}
	}
	if !found {
		t.Errorf("no audit entry for the quota change: %+v", entries)
	}

	// Clearing a field makes it inherit again; the default and a group can be set too.
	if code, _, _ := mpPost(t, p, admin, "/admin/quotas/default", mpQuotaForm("1", "")); code != http.StatusSeeOther {
		t.Fatalf("default save: %d", code)
	}
	if _, d := p.api("GET", "/api/v1/admin/quotas/default", adminTok, ""); mpNum(t, d, "max_gpus") != float64(1) {
		t.Errorf("default quota: %v", d)
	}
	g, err := p.srv.Store.CreateGroup(context.Background(), "ml team", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.AddGroupMember(context.Background(), g.ID, ada.ID); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := mpPost(t, p, admin, "/admin/quotas/groups/"+url.PathEscape("ml team"), mpQuotaForm("6", "")); code != http.StatusSeeOther {
		t.Fatalf("group save: %d", code)
	}
	if code, _, _ := mpPost(t, p, admin, "/admin/quotas/users/ada", mpQuotaForm("", "")); code != http.StatusSeeOther {
		t.Fatalf("user clear: %d", code)
	}
	_, q = p.api("GET", "/api/v1/admin/quotas/users/ada", adminTok, "")
	eff, _ := q["effective"].(map[string]any)
	if mpNum(t, q, "max_gpus") != nil || eff["max_gpus"] != float64(6) {
		t.Errorf("after clearing, ada inherits the group's 6 GPUs: own %v effective %v", q["quota"], eff)
	}
	_, body = p.get(admin, "/admin/quotas")
	row = mpDoc(t, body).Find(`[data-testid=quota-row][data-name=ada]`)
	if ph, _ := row.Find(`input[name=max_gpus]`).Attr("placeholder"); ph != "inherit: 6" {
		t.Errorf("placeholder of an inherited field %q", ph)
	}

	// Unknown subjects and non-admins are refused.
	if code, _, _ := mpPost(t, p, admin, "/admin/quotas/users/nobody", mpQuotaForm("1", "")); code != http.StatusNotFound {
		t.Errorf("unknown user: %d", code)
	}
	adaClient := p.client()
	p.login(adaClient, "ada", "ada-password")
	if code, _, _ := mpPost(t, p, adaClient, "/admin/quotas/users/ada", mpQuotaForm("99", "")); code != http.StatusForbidden {
		t.Errorf("a user setting their own quota: %d", code)
	}
	if res, _ := p.get(adaClient, "/admin/quotas"); res.StatusCode != http.StatusForbidden {
		t.Errorf("a user opening the console: %d", res.StatusCode)
	}
}

func TestQuotaConsoleBadInputChangesNothing(t *testing.T) {
	p := newPortal(t)
	admin, adminTok := mpAdmin(t, p)
	tokenFor(t, p, "bob", "user")
	if st, _ := p.api("PUT", "/api/v1/admin/quotas/users/bob", adminTok, `{"max_gpus": 2, "budget_per_month_micros": 5000000}`); st != 200 {
		t.Fatalf("seed quota: %d", st)
	}
	before, _ := p.srv.Store.ListAudit(context.Background(), 100)

	for _, tc := range []struct {
		form  url.Values
		field string
		msg   string
	}{
		{mpQuotaForm("4", "12.3.4"), "budget", "amount"},
		{mpQuotaForm("4", "1.0000001"), "budget", "6 decimals"},
		{mpQuotaForm("4", "-5"), "budget", "negative"},
		{mpQuotaForm("4", "1e3"), "budget", "amount"},
		{mpQuotaForm("two", "10"), "max_gpus", "whole number"},
		{mpQuotaForm("-1", "10"), "max_gpus", "0 or more"},
	} {
		code, _, body := mpPost(t, p, admin, "/admin/quotas/users/bob", tc.form)
		if code != http.StatusBadRequest {
			t.Errorf("%v: status %d, want 400", tc.form, code)
			continue
		}
		doc := mpDoc(t, body)
		row := doc.Find(`[data-testid=quota-row][data-name=bob]`)
		e := row.Find(`[data-testid=error-` + tc.field + `]`)
		if e.Length() != 1 || !strings.Contains(e.Text(), tc.msg) {
			t.Errorf("%v: error beside %s: %d %q", tc.form, tc.field, e.Length(), e.Text())
		}
		if v, _ := row.Find(`input[name=` + tc.field + `]`).Attr("value"); v != tc.form.Get(tc.field) {
			t.Errorf("the submitted %s is not kept: %q", tc.field, v)
		}
		// The console comes back found on the edited user (it pages its
		// users, so page 1 need not hold the row): search box and all.
		if doc.Find(`[data-testid=quota-table]`).Length() != 1 || doc.Find(`#quota-q`).AttrOr("value", "") != "bob" {
			t.Error("the console is not re-rendered around bob's row")
		}
	}
	_, q := p.api("GET", "/api/v1/admin/quotas/users/bob", adminTok, "")
	if mpNum(t, q, "max_gpus") != float64(2) || mpNum(t, q, "budget_per_month_micros") != float64(5_000_000) {
		t.Errorf("bad input changed the quota: %v", q["quota"])
	}
	after, _ := p.srv.Store.ListAudit(context.Background(), 100)
	if len(after) != len(before) {
		t.Errorf("refused changes were audited: %d → %d entries", len(before), len(after))
	}
}

func TestPriceFormAddsVersions(t *testing.T) {
	p := newPortal(t)
	admin, adminTok := mpAdmin(t, p)
	res, body := p.get(admin, "/admin/prices")
	if res.StatusCode != 200 {
		t.Fatalf("GET /admin/prices: %d", res.StatusCode)
	}
	doc := mpDoc(t, body)
	if doc.Find(`[data-testid=price-current] [data-testid=price-default]`).Length() == 0 {
		t.Error("seeded rates are not marked as defaults to review")
	}
	model, _ := doc.Find(`[data-testid=price-row][data-resource=gpu]`).Attr("data-gpu-model")
	if model == "" || doc.Find(`select[name=gpu_model] option[value="`+model+`"]`).Length() != 1 {
		t.Fatalf("the pool's GPU model %q is not offered", model)
	}
	histLen := func() int {
		_, out := p.api("GET", "/api/v1/admin/prices", adminTok, "")
		h, _ := out["history"].([]any)
		return len(h)
	}
	n0 := histLen()

	code, loc, _ := mpPost(t, p, admin, "/admin/prices", url.Values{"resource": {"gpu"}, "gpu_model": {model}, "rate": {"4.123456"}, "effective_from": {""}})
	if code != http.StatusSeeOther || loc != "/admin/prices" {
		t.Fatalf("add rate: %d → %q", code, loc)
	}
	_, out := p.api("GET", "/api/v1/admin/prices", adminTok, "")
	var gotNow bool
	for _, r := range out["current"].([]any) {
		m := r.(map[string]any)
		if m["resource"] == "gpu" && m["gpu_model"] == model && m["rate_micros"] == float64(4_123_456) && m["is_default"] == false {
			gotNow = true
		}
	}
	if !gotNow {
		t.Errorf("the new GPU rate is not in force: %v", out["current"])
	}
	_, body = p.get(admin, "/admin/prices")
	doc = mpDoc(t, body)
	if m, _ := doc.Find(`[data-testid=price-row][data-resource=gpu]`).Attr("data-rate-micros"); m != "4123456" {
		t.Errorf("current GPU rate on the page: %q", m)
	}
	if doc.Find(`[data-testid=price-row][data-resource=gpu] [data-testid=price-default]`).Length() != 0 {
		t.Error("a reviewed rate is still marked as a default")
	}

	// A future version is scheduled, not in force.
	future := time.Now().UTC().Add(48 * time.Hour).Format("2006-01-02T15:04")
	if code, _, _ := mpPost(t, p, admin, "/admin/prices", url.Values{"resource": {"cpu"}, "rate": {"0.05"}, "effective_from": {future}}); code != http.StatusSeeOther {
		t.Fatalf("future rate: %d", code)
	}
	_, body = p.get(admin, "/admin/prices")
	doc = mpDoc(t, body)
	if doc.Find(`[data-testid=price-scheduled]`).Length() != 1 {
		t.Error("the future rate is not shown as scheduled")
	}
	if m, _ := doc.Find(`[data-testid=price-row][data-resource=cpu]`).Attr("data-rate-micros"); m == "50000" {
		t.Error("a future rate shows as in force")
	}
	if !strings.Contains(doc.Find(`[data-testid=price-row][data-resource=cpu]`).Text(), "0.05 from") {
		t.Error("the next change is not shown on the current rate")
	}
	n1 := histLen()
	if n1 != n0+2 {
		t.Errorf("history %d → %d, want +2", n0, n1)
	}
	// The same forms sent again (a double click, a reload that re-posts)
	// change nothing and say so: no version, no audit row.
	audit0, _ := p.srv.Store.ListAudit(context.Background(), 100)
	code, _, _ = mpPost(t, p, admin, "/admin/prices", url.Values{"resource": {"gpu"}, "gpu_model": {model}, "rate": {"4.123456"}, "effective_from": {""}})
	if code != http.StatusSeeOther {
		t.Fatalf("the same rate again: %d", code)
	}
	if _, body := p.get(admin, "/admin/prices"); !strings.Contains(mpDoc(t, body).Find("[data-testid=flash]").Text(), "is already 4.123456 USD per GPU-hour; nothing changed") {
		t.Errorf("no word that nothing changed: %q", mpDoc(t, body).Find("[data-testid=flash]").Text())
	}
	if code, _, _ := mpPost(t, p, admin, "/admin/prices", url.Values{"resource": {"cpu"}, "rate": {"0.05"}, "effective_from": {future}}); code != http.StatusSeeOther {
		t.Fatalf("the same future rate again: %d", code)
	}
	if n := histLen(); n != n1 {
		t.Errorf("repeating rates in force added versions: %d → %d", n1, n)
	}
	if audit1, _ := p.srv.Store.ListAudit(context.Background(), 100); len(audit1) != len(audit0) {
		t.Errorf("repeating rates in force was audited: %d → %d entries", len(audit0), len(audit1))
	}

	// Refused: a past effective time, a bad rate, a GPU rate without a model.
	for _, tc := range []struct {
		form  url.Values
		field string
	}{
		{url.Values{"resource": {"gpu"}, "gpu_model": {model}, "rate": {"5"}, "effective_from": {"2020-01-01T00:00"}}, "effective_from"},
		{url.Values{"resource": {"gpu"}, "gpu_model": {model}, "rate": {"5,50"}}, "rate"},
		{url.Values{"resource": {"gpu"}, "gpu_model": {""}, "rate": {"5"}}, "gpu_model"},
		{url.Values{"resource": {"cpu"}, "rate": {"2000000"}}, "rate"},
		{url.Values{"resource": {"gold"}, "rate": {"1"}}, "resource"},
		{url.Values{"resource": {"cpu"}, "rate": {"1"}, "effective_from": {"tomorrow"}}, "effective_from"},
	} {
		code, _, body := mpPost(t, p, admin, "/admin/prices", tc.form)
		if code != http.StatusBadRequest {
			t.Errorf("%v: status %d, want 400", tc.form, code)
			continue
		}
		doc := mpDoc(t, body)
		if doc.Find(`[data-testid=error-`+tc.field+`]`).Length() != 1 {
			t.Errorf("%v: no error beside %s", tc.form, tc.field)
		}
		if v, _ := doc.Find(`input[name=rate]`).Attr("value"); v != tc.form.Get("rate") {
			t.Errorf("the rate input is not kept: %q", v)
		}
	}
	if n := histLen(); n != n1 {
		t.Errorf("refused rates were added: %d → %d", n1, n)
	}
	entries, _ := p.srv.Store.ListAudit(context.Background(), 50)
	audited := 0
	for _, e := range entries {
		if e.Action == "price.set" && e.Actor == "admin" {
			audited++
			// Each names the rate it replaces, as other changes name what
			// was there (it had no "before"): the GPU's seeded 3.00, the
			// CPU's rate in force where the future one takes over.
			var before struct {
				Resource string `json:"resource"`
				Micros   int64  `json:"rate_micros"`
			}
			if err := json.Unmarshal([]byte(e.Before), &before); err != nil || before.Micros <= 0 || !strings.Contains(e.Target, before.Resource) {
				t.Errorf("price.set on %s has no rate it replaced: before %q (%v)", e.Target, e.Before, err)
			}
		}
	}
	if audited != 2 {
		t.Errorf("price changes audited: %d, want 2", audited)
	}
}

// mpSeedLines writes ledger lines for a user straight into the ledger.
func mpSeedLines(t *testing.T, p *testPortal, userID int64, group string, at time.Time, amounts ...int64) {
	t.Helper()
	var lines []models.LedgerEntry
	for i, a := range amounts {
		start := at.Add(time.Duration(i) * time.Hour)
		lines = append(lines, models.LedgerEntry{IdempotencyKey: fmt.Sprintf("test:%d:%d:%d", userID, start.Unix(), i),
			UserID: userID, GroupName: group, WorkbenchID: "wb-test", Resource: "gpu", GPUModel: "NVIDIA H100 80GB HBM3",
			PeriodStart: start, PeriodEnd: start.Add(time.Hour), Seconds: 3600, QuantityMilli: 1000, RateMicros: a, AmountMicros: a})
	}
	if _, err := p.srv.Store.RecordBilling(context.Background(), 0, lines, at, true); err != nil {
		t.Fatal(err)
	}
}

func TestUsagePageStatementAndCSV(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "ada", "user")
	tokenFor(t, p, "bob", "user")
	ada, _ := p.srv.Store.UserByUsername(ctx, "ada")
	bob, _ := p.srv.Store.UserByUsername(ctx, "bob")
	month := models.MonthStart(time.Now())
	mpSeedLines(t, p, ada.ID, "", month, 1_234_567, 2_000_001)
	mpSeedLines(t, p, ada.ID, "", month.AddDate(0, -1, 0), 9_999_999)
	mpSeedLines(t, p, bob.ID, "", month, 5_000_000)
	_, adminTok := mpAdmin(t, p)
	p.api("PUT", "/api/v1/admin/quotas/users/ada", adminTok, `{"max_gpus": 4, "budget_per_month_micros": 4000000}`)

	c := p.client()
	p.login(c, "ada", "ada-password")
	res, body := p.get(c, "/usage")
	if res.StatusCode != 200 {
		t.Fatalf("GET /usage: %d", res.StatusCode)
	}
	doc := mpDoc(t, body)
	if n := doc.Find(`[data-testid=statement-row]`).Length(); n != 2 {
		t.Errorf("statement rows %d, want ada's 2 of this month", n)
	}
	if tot := strings.TrimSpace(doc.Find(`[data-testid=statement-total]`).Text()); tot != "3.23 USD" {
		t.Errorf("total %q", tot)
	}
	gpus := doc.Find(`[data-testid=quota-bar-gpus]`)
	if l, _ := gpus.Attr("data-limit"); l != "4" {
		t.Errorf("gpu bar limit %q", l)
	}
	if u, _ := gpus.Attr("data-used"); u != "0" {
		t.Errorf("gpu bar used %q", u)
	}
	spend := doc.Find(`[data-testid=quota-bar-spend]`)
	if u, _ := spend.Attr("data-used"); u != "3234568" {
		t.Errorf("spend used %q", u)
	}
	if !spend.HasClass("level-warn") || doc.Find(`[data-testid=quota-warning]`).Length() != 1 {
		t.Error("81% of the budget shows no warning")
	}
	for _, k := range []string{"workbenches", "gpu-hours"} {
		if doc.Find(`[data-testid=quota-bar-`+k+`]`).Length() != 1 {
			t.Errorf("no %s bar", k)
		}
	}
	if doc.Find(`nav.mainnav a[href="/usage"].active`).Length() != 1 {
		t.Error("the Usage nav item is missing or not active")
	}

	// Last month: its own line only.
	prev := month.AddDate(0, -1, 0).Format("2006-01")
	_, body = p.get(c, "/usage?month="+prev)
	doc = mpDoc(t, body)
	if n := doc.Find(`[data-testid=statement-row]`).Length(); n != 1 || !strings.Contains(doc.Find(`[data-testid=statement-total]`).Text(), "10.00") {
		t.Errorf("last month: %d rows, total %q", n, doc.Find(`[data-testid=statement-total]`).Text())
	}
	if res, _ := p.get(c, "/usage?month=2026-13"); res.StatusCode != http.StatusBadRequest {
		t.Errorf("bad month: %d", res.StatusCode)
	}

	// The CSV: a header, exact amounts, only ada's lines of the month.
	res, body = p.get(c, "/usage.csv?month="+month.Format("2006-01"))
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") ||
		!strings.Contains(res.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("csv: %d %q %q", res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Content-Disposition"))
	}
	recs, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(body, "\ufeff"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Fatalf("csv has %d records, want header + 2: %q", len(recs), body)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, h := range []string{"period_start", "period_end", "workbench", "resource", "gpu_model", "seconds", "quantity", "rate", "amount", "rate_micros", "amount_micros"} {
		if _, ok := col[h]; !ok {
			t.Errorf("csv header lacks %s: %v", h, recs[0])
		}
	}
	if a, m := recs[1][col["amount"]], recs[1][col["amount_micros"]]; a != "1.234567" || m != "1234567" {
		t.Errorf("first amount %q / %q", a, m)
	}
	if a := recs[2][col["amount"]]; a != "2.000001" {
		t.Errorf("second amount %q", a)
	}
	if r := recs[1][col["rate"]]; r != "1.234567" {
		t.Errorf("rate %q", r)
	}
	if s, q := recs[1][col["seconds"]], recs[1][col["quantity"]]; s != "3600" || q != "1" {
		t.Errorf("seconds %q quantity %q", s, q)
	}
	if ps := recs[1][col["period_start"]]; ps != month.Format(time.RFC3339) {
		t.Errorf("period_start %q", ps)
	}
	if res, _ := p.get(p.client(), "/usage.csv"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("anonymous csv: %d", res.StatusCode)
	}
}

func TestBillingOverviewAndCSV(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "ada", "user")
	tokenFor(t, p, "bob", "user")
	ada, _ := p.srv.Store.UserByUsername(ctx, "ada")
	bob, _ := p.srv.Store.UserByUsername(ctx, "bob")
	month := models.MonthStart(time.Now())
	mpSeedLines(t, p, ada.ID, "ml", month, 1_000_001, 2_000_000)
	mpSeedLines(t, p, bob.ID, "", month, 7_000_000)
	admin, adminTok := mpAdmin(t, p)

	res, body := p.get(admin, "/admin/billing")
	if res.StatusCode != 200 {
		t.Fatalf("GET /admin/billing: %d", res.StatusCode)
	}
	doc := mpDoc(t, body)
	if g, _ := doc.Find(`[data-testid=billing-table]`).Attr("data-group-by"); g != "user" {
		t.Errorf("default grouping %q", g)
	}
	keys := doc.Find(`[data-testid=billing-row]`).Map(func(_ int, s *goquery.Selection) string { k, _ := s.Attr("data-key"); return k })
	if strings.Join(keys, ",") != "bob,ada" {
		t.Errorf("rows by amount: %v", keys)
	}
	if tot := strings.TrimSpace(doc.Find(`[data-testid=billing-total]`).Text()); tot != "10.00 USD" {
		t.Errorf("total %q", tot)
	}

	_, body = p.get(admin, "/admin/billing?group_by=group&month="+month.Format("2006-01"))
	doc = mpDoc(t, body)
	if n := doc.Find(`[data-testid=billing-row]`).Length(); n != 2 || !strings.Contains(doc.Text(), "no group") {
		t.Errorf("by group: %d rows", n)
	}
	if res, _ := p.get(admin, "/admin/billing?group_by=colour"); res.StatusCode != http.StatusBadRequest {
		t.Errorf("bad grouping: %d", res.StatusCode)
	}
	prev := month.AddDate(0, -1, 0).Format("2006-01")
	_, body = p.get(admin, "/admin/billing?month="+prev)
	if mpDoc(t, body).Find(`[data-testid=billing-empty]`).Length() != 1 {
		t.Error("an empty month does not say so")
	}

	res, body = p.get(admin, "/admin/billing.csv?group_by=user&month="+month.Format("2006-01"))
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") {
		t.Fatalf("billing csv: %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	recs, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(body, "\ufeff"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || strings.Join(recs[0], ",") != "month,user,gpu_seconds,gpu_hours,amount,amount_micros,currency,energy_kwh,energy_mj,energy_cost_micros,preemptible_micros" {
		t.Fatalf("billing csv: %q", recs)
	}
	for _, r := range recs[1:] {
		if r[1] == "ada" && (r[4] != "3.000001" || r[5] != "3000001" || r[2] != "7200") {
			t.Errorf("ada's row %q", r)
		}
	}

	// A credit larger than carl's use (he used nothing) makes his row
	// negative: shares are of what the rows charged, within 0–100 %, and
	// his row has none (they read 70 %, 30 % and −20 % of the net total,
	// adding up to 80 %... or 120 % when the credit was the other way).
	tokenFor(t, p, "carl", "user")
	if code, out := p.api("POST", "/api/v1/admin/ledger/credits", adminTok, `{"user":"carl","amount_micros":2000000,"reason":"outage compensation"}`); code != http.StatusCreated {
		t.Fatalf("credit: %d %v", code, out)
	}
	_, body = p.get(admin, "/admin/billing?group_by=user&month="+month.Format("2006-01"))
	shares := map[string]string{}
	mpDoc(t, body).Find(`[data-testid=billing-row]`).Each(func(_ int, s *goquery.Selection) {
		k, _ := s.Attr("data-key")
		shares[k] = strings.TrimSpace(s.Find(`[data-testid=billing-share]`).Text())
	})
	if shares["bob"] != "70%" || shares["ada"] != "30%" || shares["carl"] != "—" {
		t.Errorf("shares with a credit: %v; want bob 70%%, ada 30%%, carl —", shares)
	}

	c := p.client()
	p.login(c, "ada", "ada-password")
	for _, path := range []string{"/admin/billing", "/admin/billing.csv", "/admin/prices"} {
		if res, _ := p.get(c, path); res.StatusCode != http.StatusForbidden {
			t.Errorf("a user opening %s: %d", path, res.StatusCode)
		}
	}
}

// mpGroupOf creates the group name with the user username in it.
func mpGroupOf(t *testing.T, p *testPortal, name, username string) {
	t.Helper()
	ctx := context.Background()
	u, err := p.srv.Store.UserByUsername(ctx, username)
	if err != nil {
		t.Fatal(err)
	}
	g, err := p.srv.Store.CreateGroup(ctx, name, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.AddGroupMember(ctx, g.ID, u.ID); err != nil {
		t.Fatal(err)
	}
}

// TestEmptyGroupRowLiftsNoLimit: with an unlimited default, ada is in
// "students" (2 GPUs at once) and in "reading club". An admin clicks Save
// on the club's empty row in the console ("empty fields inherit"): ada
// keeps her limit of 2, as when the club had no row. (An empty field stood
// for the unlimited default and lifted the students' limit.)
func TestEmptyGroupRowLiftsNoLimit(t *testing.T) {
	p := newPortal(t)
	admin, adminTok := mpAdmin(t, p)
	tokenFor(t, p, "ada", "user")
	mpGroupOf(t, p, "students", "ada")
	mpGroupOf(t, p, "reading club", "ada")
	effective := func() any {
		_, q := p.api("GET", "/api/v1/admin/quotas/users/ada", adminTok, "")
		eff, _ := q["effective"].(map[string]any)
		return eff["max_gpus"]
	}
	if code, _, _ := mpPost(t, p, admin, "/admin/quotas/groups/students", mpQuotaForm("2", "")); code != http.StatusSeeOther {
		t.Fatalf("students save: %d", code)
	}
	if got := effective(); got != float64(2) {
		t.Fatalf("ada's GPUs at once with the students' limit: %v, want 2", got)
	}
	if code, _, _ := mpPost(t, p, admin, "/admin/quotas/groups/"+url.PathEscape("reading club"), mpQuotaForm("", "")); code != http.StatusSeeOther {
		t.Fatalf("reading club save: %d", code)
	}
	if got := effective(); got != float64(2) {
		t.Errorf("after saving the reading club's empty row, ada's GPUs at once: %v, want still 2", got)
	}
	// What ada reads about herself says the same.
	_, me := p.api("GET", "/api/v1/me", tokenFor(t, p, "ada", "user"), "")
	if q, _ := me["quota"].(map[string]any); q["max_gpus"] != float64(2) {
		t.Errorf("ada's /api/v1/me quota: %v, want max_gpus 2", me["quota"])
	}
}

// TestRenamedImageStaysAllowed: ml-team's quota allows "PyTorch (CUDA 12)"
// only; an admin renames the image. Gina, in ml-team, still finds it on
// the launch form under its new name, and the quota lists the new name.
func TestRenamedImageStaysAllowed(t *testing.T) {
	p := newPortal(t)
	_, adminTok := mpAdmin(t, p)
	tokenFor(t, p, "gina", "user")
	ctx := context.Background()
	mpGroupOf(t, p, "ml-team", "gina")
	if code, out := p.api("PUT", "/api/v1/admin/quotas/groups/ml-team", adminTok, `{"allowed_images":["PyTorch (CUDA 12)"]}`); code != 200 {
		t.Fatalf("set the group's quota: %d %v", code, out)
	}
	img, err := p.srv.Store.ImageByNameOrID(ctx, "PyTorch (CUDA 12)")
	if err != nil {
		t.Fatal(err)
	}
	body := jsonBody(map[string]any{"name": "PyTorch CUDA 12 (lab)", "image": img.Image, "start_command": img.StartCommand,
		"home_path": img.HomePath, "run_as_user": img.RunAsUser, "enabled": true})
	if code, out := p.api("PUT", "/api/v1/images/"+itoa(img.ID), adminTok, body); code != 200 {
		t.Fatalf("rename: %d %v", code, out)
	}
	c := p.client()
	p.login(c, "gina", "gina-password")
	_, page := p.get(c, "/workbenches/new")
	if n := mpDoc(t, page).Find(`input[name=image][value="PyTorch CUDA 12 (lab)"]`).Length(); n != 1 {
		t.Errorf("gina's launch form offers the renamed image %d times, want once", n)
	}
	if code, out := p.api("GET", "/api/v1/admin/quotas/groups/ml-team", adminTok, ""); code != 200 || fmt.Sprint(out["quota"].(map[string]any)["allowed_images"]) != "[PyTorch CUDA 12 (lab)]" {
		t.Errorf("the group's quota after the rename: %d %v", code, out["quota"])
	}
}

// TestPerModelCapIsShown: a quota that caps a GPU model (max_gpus_per_model,
// set through the API) shows as its own bar on the user's usage page and in
// the admin's quota console, beside "GPUs in use": alice, capped at 0 ×
// H100, reads why every H100 flavor is refused (it read "0 / unlimited").
func TestPerModelCapIsShown(t *testing.T) {
	p := newPortal(t)
	admin, adminTok := mpAdmin(t, p)
	tokenFor(t, p, "alice", "user")
	if code, out := p.api("PUT", "/api/v1/admin/quotas/users/alice", adminTok, `{"max_gpus_per_model":{"NVIDIA H100 80GB HBM3":0}}`); code != 200 {
		t.Fatalf("cap alice: %d %v", code, out)
	}
	check := func(where string, bar *goquery.Selection) {
		t.Helper()
		label := strings.TrimSpace(bar.Find(".quota-label").Text())
		figures := strings.Join(strings.Fields(bar.Find(`[data-testid=quota-figures]`).Text()), " ")
		if bar.Length() != 1 || label != "H100 80GB HBM3 in use" || figures != "0 / 0" {
			t.Errorf("%s: per-model bar %d, label %q, figures %q; want one, \"H100 80GB HBM3 in use\", \"0 / 0\"", where, bar.Length(), label, figures)
		}
	}
	alice := p.client()
	p.login(alice, "alice", "alice-password")
	_, body := p.get(alice, "/usage")
	check("alice's /usage", mpDoc(t, body).Find(`[data-testid=quota-bar-gpus-model]`))
	_, body = p.get(admin, "/admin/quotas?q=alice")
	check("the console's row of alice", mpDoc(t, body).Find(`[data-testid=quota-row][data-name=alice] [data-testid=quota-bar-gpus-model]`))
	_, me := p.api("GET", "/api/v1/me", tokenFor(t, p, "alice", "user"), "")
	if u, _ := me["usage"].(map[string]any); u == nil || fmt.Sprint(u["gpus_in_use_by_model"]) != "map[]" {
		t.Errorf("/api/v1/me usage: %v, want gpus_in_use_by_model {}", me["usage"])
	}
}

// TestPricesPutRetriedAddsNothing: a script whose PUT /admin/prices lost its
// answer sends it again; the second adds no version and says which rates
// were already in force. A new value in the same body is still added, and
// a default rate set to its own value is confirmed (no longer a default).
func TestPricesPutRetriedAddsNothing(t *testing.T) {
	p := newPortal(t)
	_, adminTok := mpAdmin(t, p)
	model := moneyGPUModel(t, p)
	history := func() int {
		_, out := p.api("GET", "/api/v1/admin/prices", adminTok, "")
		h, _ := out["history"].([]any)
		return len(h)
	}
	body := fmt.Sprintf(`{"rates":[{"resource":"gpu","gpu_model":%q,"rate_micros":2500000},{"resource":"cpu","rate_micros":40000}]}`, model)
	code, out := p.api("PUT", "/api/v1/admin/prices", adminTok, body)
	if code != http.StatusOK || len(out["added"].([]any)) != 2 || len(out["unchanged"].([]any)) != 0 {
		t.Fatalf("first PUT: %d %v", code, out)
	}
	n := history()
	code, out = p.api("PUT", "/api/v1/admin/prices", adminTok, body)
	if code != http.StatusOK || len(out["added"].([]any)) != 0 || len(out["unchanged"].([]any)) != 2 {
		t.Fatalf("retried PUT: %d %v; want nothing added, both unchanged", code, out)
	}
	if got := history(); got != n {
		t.Fatalf("the retry added versions: %d → %d", n, got)
	}
	// One entry new, one repeated: only the new one is added.
	code, out = p.api("PUT", "/api/v1/admin/prices", adminTok, fmt.Sprintf(`{"rates":[{"resource":"gpu","gpu_model":%q,"rate_micros":2600000},{"resource":"cpu","rate_micros":40000}]}`, model))
	if code != http.StatusOK || len(out["added"].([]any)) != 1 || len(out["unchanged"].([]any)) != 1 {
		t.Fatalf("mixed PUT: %d %v", code, out)
	}
	// The memory rate is still the seeded default: its own value confirms it.
	_, cur := p.api("GET", "/api/v1/admin/prices", adminTok, "")
	var memMicros float64 = -1
	for _, r := range cur["current"].([]any) {
		if m := r.(map[string]any); m["resource"] == "memory" && m["is_default"] == true {
			memMicros = m["rate_micros"].(float64)
		}
	}
	if memMicros < 0 {
		t.Fatalf("no default memory rate: %v", cur["current"])
	}
	code, out = p.api("PUT", "/api/v1/admin/prices", adminTok, fmt.Sprintf(`{"rates":[{"resource":"memory","rate_micros":%d}]}`, int64(memMicros)))
	if code != http.StatusOK || len(out["added"].([]any)) != 1 {
		t.Fatalf("confirming the default memory rate: %d %v; want it added", code, out)
	}
}
