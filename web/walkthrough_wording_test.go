package web_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
)

// The credit form's errors name its one rule, "more than 0 and at most
// 1,000,000": -5 said "cannot be negative: enter 0 or more", and then 0
// said "must be more than 0"; an amount too large for the parser said
// "is too large" with no limit. A rate too large names the rate's range.
func TestMoneyFormErrorsNameTheRule(t *testing.T) {
	p := newPortal(t)
	tokenFor(t, p, "ada", "user")
	adminC, _ := mpAdmin(t, p)
	for amount, want := range map[string]string{
		"-5":             "must be more than 0 and at most 1,000,000",
		"0":              "must be more than 0 and at most 1,000,000",
		"99999999999999": "must be more than 0 and at most 1,000,000",
	} {
		code, _, body := mpPost(t, p, adminC, "/admin/billing/credit", url.Values{"user": {"ada"}, "amount": {amount}, "reason": {"goodwill"}})
		if got := mpDoc(t, body).Find(`[data-testid=credit-form] [data-testid=error-amount]`).Text(); code != http.StatusBadRequest || got != want {
			t.Errorf("credit of %s: %d, %q; want 400 %q", amount, code, got, want)
		}
	}
	code, _, body := mpPost(t, p, adminC, "/admin/prices", url.Values{"resource": {"cpu"}, "rate": {"99999999999999"}})
	if got, want := mpDoc(t, body).Find(`[data-testid=price-form] [data-testid=error-rate]`).Text(), "must be between 0 and 1,000,000 per unit"; code != http.StatusBadRequest || got != want {
		t.Errorf("a rate too large: %d, %q; want 400 %q", code, got, want)
	}
}

// A deleted workbench's row on /usage is named in the reader's language:
// the Chinese page read "exp (deleted, <id>)", the words built in SQL.
// The summary CSV keeps the English key (a stable column for scripts).
func TestDeletedWorkbenchRowIsTranslated(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "alice", "user")
	alice, _ := p.srv.Store.UserByUsername(ctx, "alice")
	wb := &models.Workbench{Name: "exp", OwnerID: alice.ID, ImageID: 1, FlavorID: 1}
	if err := p.srv.Store.CreateWorkbench(ctx, wb, models.GPUNeed{}, nil); err != nil {
		t.Fatal(err)
	}
	month := models.MonthStart(time.Now())
	line := models.LedgerEntry{IdempotencyKey: "test:deleted-row", UserID: alice.ID, WorkbenchID: wb.ID, Resource: "cpu",
		PeriodStart: month, PeriodEnd: month.Add(time.Hour), Seconds: 3600, QuantityMilli: 1000, RateMicros: 1_000_000, AmountMicros: 1_000_000}
	if _, err := p.srv.Store.RecordBilling(ctx, 0, []models.LedgerEntry{line}, month, true); err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.MarkWorkbenchDeleted(ctx, wb.ID, time.Time{}); err != nil {
		t.Fatal(err)
	}
	zh, en := p.readersSignedIn("alice", "alice-password")
	rowName := func(c *http.Client) string {
		_, page := p.get(c, "/usage")
		return strings.TrimSpace(mpDoc(t, page).Find(`[data-testid=statement-summary] [data-testid=summary-row] td`).First().Text())
	}
	if got, want := rowName(zh), "exp（已删除，"+wb.ID+"）"; got != want {
		t.Errorf("the Chinese row reads %q, want %q", got, want)
	}
	if got, want := rowName(en), "exp (deleted, "+wb.ID+")"; got != want {
		t.Errorf("the English row reads %q, want %q", got, want)
	}
	_, body := p.get(zh, "/usage-summary.csv?month="+month.Format("2006-01"))
	rows, err := csv.NewReader(strings.NewReader(strings.TrimPrefix(body, "\ufeff"))).ReadAll()
	if err != nil || len(rows) != 2 || rows[1][1] != "exp (deleted, "+wb.ID+")" {
		t.Errorf("the summary CSV for a reader of Chinese: %v %v; want the English key", rows, err)
	}
}

// The notebook tab of a workbench stopped by the budget says once that the
// files are kept ("…(your files are kept). Your files in the home
// directory are kept."), and says the budget is used up beside Start, as
// the workbench page does: Start would be refused.
func TestNotRunningPageSaysFilesKeptOnceAndTheBudget(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "alice", "user")
	alice, _ := p.srv.Store.UserByUsername(ctx, "alice")
	budget := int64(1_000_000)
	if err := p.srv.Store.SetQuota(ctx, models.ScopeUser, alice.ID, models.Limits{BudgetPerMonthMicros: &budget}, "test"); err != nil {
		t.Fatal(err)
	}
	month := models.MonthStart(time.Now())
	line := models.LedgerEntry{IdempotencyKey: "test:spent", UserID: alice.ID, Resource: "cpu",
		PeriodStart: month, PeriodEnd: month.Add(time.Hour), Seconds: 3600, QuantityMilli: 1000, RateMicros: budget, AmountMicros: budget}
	if _, err := p.srv.Store.RecordBilling(ctx, 0, []models.LedgerEntry{line}, month, true); err != nil {
		t.Fatal(err)
	}
	wb := p.runningRecord(alice, "nb", models.GPUNeed{})
	why := "stopped: " + models.BudgetUsedUp() + " (your files are kept)"
	if err := p.srv.Store.SetWorkbenchState(ctx, wb.ID, models.StateStopped, 0, why, nil); err != nil {
		t.Fatal(err)
	}
	zh, en := p.readersSignedIn("alice", "alice-password")
	for _, tc := range []struct {
		c            *http.Client
		kept, banner string
	}{
		{en, "kept", "Your monthly budget is used up"},
		{zh, "保留", "你本月的预算已用完"},
	} {
		req, _ := http.NewRequest(http.MethodGet, p.ts.URL+"/wb/"+wb.ID+"/lab", nil)
		req.Header.Set("Accept", "text/html")
		res, err := tc.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := goquery.NewDocumentFromReader(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		page := doc.Find(`[data-testid=not-running]`)
		if n := strings.Count(page.Text(), tc.kept); n != 1 {
			t.Errorf("the not-running page says %d times that the files are kept: %q", n, strings.Join(strings.Fields(page.Text()), " "))
		}
		if got := page.Find(`[data-testid=budget-banner]`).Text(); !strings.Contains(got, tc.banner) {
			t.Errorf("the not-running page's budget banner reads %q, want %q", got, tc.banner)
		}
	}
}

// A whole number too big for int is still a whole number: the launch
// form's idle field and the flavor form's whole-number fields say their
// range ("must be a whole number of minutes" / "must be a whole number,
// not …" was untrue), and a big one that fits int64 is refused too (its
// minutes wrapped around as a Duration).
func TestHugeWholeNumbersAreToldTheRange(t *testing.T) {
	p := newPortal(t)
	tokenFor(t, p, "alice", "user")
	p.addImage(fakeCatalogImage("fake", "example.invalid/fake:1"))
	c := p.client()
	p.login(c, "alice", "alice-password")
	const want = "must be between 10 min and 24 h" // the test portal's idle range
	for _, idle := range []string{"99999999999999999999", "99999999999999", "-99999999999999999999"} {
		res, body := p.postFormBody(c, "/workbenches", url.Values{"image": {"fake"}, "flavor": {"CPU small"}, "name": {"big"}, "idle_minutes": {idle}})
		got := strings.TrimSpace(mpDoc(t, body).Find(`[data-testid=error-idle_timeout]`).Text())
		if res.StatusCode != http.StatusBadRequest || got != want {
			t.Errorf("idle %s: %d %q; want 400 %q", idle, res.StatusCode, got, want)
		}
	}
	admin := p.client()
	p.loginSudo(admin, "admin", adminPassword)
	for field, want := range map[string]string{
		"gpu_count":                "must be between 0 and 16",
		"gpu_idle_timeout_minutes": "must be between 0 (off) and 43200 minutes",
	} {
		form := url.Values{"name": {"huge"}, "gpu_count": {"0"}, "cpu_cores": {"1"}, "memory_gib": {"1"}, "enabled": {"true"}}
		form.Set(field, "99999999999999999999")
		res, page := p.postFormBody(admin, "/admin/flavors", form)
		if got := strings.TrimSpace(mpDoc(t, page).Find(`[data-testid=error-` + field + `]`).Text()); res.StatusCode != http.StatusBadRequest || got != want {
			t.Errorf("flavor %s 99999999999999999999: %d %q; want 400 %q", field, res.StatusCode, got, want)
		}
	}
}

// An empty field is told it is required, not that its characters are
// wrong (names), that there is no user "" (a group's member), or that it
// is not the password (the current password).
func TestEmptyFieldsAreRequired(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "alice", "user")
	g, err := p.srv.Store.CreateGroup(ctx, "lab", "")
	if err != nil {
		t.Fatal(err)
	}
	adminC, _ := mpAdmin(t, p)
	check := func(what string, c *http.Client, path string, form url.Values, sel, want string) {
		t.Helper()
		res, body := p.postFormBody(c, path, form)
		if got := strings.TrimSpace(mpDoc(t, body).Find(sel).Text()); res.StatusCode < 400 || got != want {
			t.Errorf("%s: %d %q; want %q", what, res.StatusCode, got, want)
		}
	}
	check("an empty group name", adminC, "/admin/groups", url.Values{"name": {"  "}}, `[data-testid=error-name]`, "is required")
	check("an empty username", adminC, "/admin/users", url.Values{"username": {""}, "password": {"a-long-password-1"}, "role": {"user"}},
		`[data-testid=new-user-form] [data-testid=error-username]`, "is required")
	check("an empty member", adminC, fmt.Sprintf("/admin/groups/%d/members", g.ID), url.Values{"username": {" "}},
		`[data-testid=group-member-error]`, "Enter a username: pick one from the list.")
	c := p.client()
	p.login(c, "alice", "alice-password")
	p.addImage(fakeCatalogImage("fake", "example.invalid/fake:1"))
	check("an empty workbench name", c, "/workbenches", url.Values{"image": {"fake"}, "flavor": {"CPU small"}, "name": {""}},
		`[data-testid=error-name]`, "is required")
	check("an empty current password", c, "/settings/password", url.Values{"current_password": {""}, "new_password": {"another-password-2"}},
		`[data-testid=error-current_password]`, "Enter your password.")
}
