package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
)

// TestAdminUsersPageAndSearch: 130 users come 100 a page with stable
// ?page= links (page 2 differs from page 1), and ?q= finds users by a part
// of their username, name or email, the filter kept in the pager's links.
func TestAdminUsersPageAndSearch(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	// Accounts as single sign-on makes them: real users without a
	// password, so 130 of them cost no password hashing (13 s of argon2id
	// on a 2-core machine); paging and search do not look at passwords.
	for i := 0; i < 130; i++ {
		name := fmt.Sprintf("pg%03d", i)
		if _, _, err := p.srv.Store.OIDCSignIn(ctx, models.OIDCIdentity{Issuer: "https://idp.test", Subject: name, Username: name}); err != nil {
			t.Fatal(err)
		}
	}
	c, _ := mpAdmin(t, p)
	_, body := p.get(c, "/admin/users")
	doc := mpDoc(t, body)
	if n := doc.Find(`[data-testid=user-row]`).Length(); n != 100 {
		t.Fatalf("page 1: %d users, want 100", n)
	}
	if info := doc.Find(`[data-testid=pager-info]`).Text(); !strings.Contains(info, "Page 1 of 2") {
		t.Fatalf("pager: %q", info)
	}
	next := doc.Find(`[data-testid=pager-next]`).AttrOr("href", "")
	if next != "/admin/users?page=2" {
		t.Fatalf("next link %q", next)
	}
	first := doc.Find(`[data-testid=user-row]`).First().AttrOr("data-username", "")
	_, body = p.get(c, next)
	doc = mpDoc(t, body)
	if n := doc.Find(`[data-testid=user-row]`).Length(); n != 31 || doc.Find(`[data-testid=user-row]`).First().AttrOr("data-username", "") == first {
		t.Fatalf("page 2: %d users starting with %q (page 1 started with %q)", n, doc.Find(`[data-testid=user-row]`).First().AttrOr("data-username", ""), first)
	}

	_, body = p.get(c, "/admin/users?q=pg1")
	doc = mpDoc(t, body)
	if n := doc.Find(`[data-testid=user-row]`).Length(); n != 30 || doc.Find(`[data-testid=pager]`).Length() != 0 {
		t.Fatalf("q=pg1: %d users (want pg100…pg129 = 30) and a pager %d", n, doc.Find(`[data-testid=pager]`).Length())
	}
	if v := doc.Find(`#user-q`).AttrOr("value", ""); v != "pg1" {
		t.Errorf("search box keeps %q", v)
	}
	_, body = p.get(c, "/admin/users?q=pg0&page=2")
	doc = mpDoc(t, body)
	if n := doc.Find(`[data-testid=user-row]`).Length(); n != 100 {
		t.Fatalf("q=pg0 page 2 (past the end): %d users, want the only page's 100", n)
	}
	if res, _ := p.get(c, "/admin/users?page=-1"); res.StatusCode != http.StatusBadRequest {
		t.Errorf("bad page: %d", res.StatusCode)
	}
}

// TestAdminAuditPagesAndFilters: the audit log pages newest first and
// filters by action prefix and actor, the filters kept in the pager's links.
func TestAdminAuditPagesAndFilters(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	for i := 0; i < 240; i++ {
		actor, action := "alice", "price.set"
		if i%3 == 0 {
			actor, action = "bob", "user.create"
		}
		if err := p.srv.Store.Audit(ctx, actor, action, fmt.Sprintf("t%03d", i), nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	c, _ := mpAdmin(t, p)
	_, body := p.get(c, "/admin/audit?action=price.&actor=alice")
	doc := mpDoc(t, body)
	if n := doc.Find(`[data-testid=audit-row]`).Length(); n != 100 {
		t.Fatalf("alice's price changes, page 1: %d rows, want 100", n)
	}
	if got := strings.TrimSpace(doc.Find(`[data-testid=audit-row]`).First().Find("td").Eq(3).Text()); got != "t239" {
		t.Errorf("newest first: first target %q, want t239", got)
	}
	next := doc.Find(`[data-testid=pager-next]`).AttrOr("href", "")
	if !strings.Contains(next, "action=price.") || !strings.Contains(next, "actor=alice") || !strings.Contains(next, "page=2") {
		t.Fatalf("next link %q lost the filters", next)
	}
	_, body = p.get(c, next)
	doc = mpDoc(t, body)
	if n := doc.Find(`[data-testid=audit-row]`).Length(); n != 60 {
		t.Fatalf("alice's price changes, page 2: %d rows, want 60", n)
	}
	if v := doc.Find(`#audit-actor`).AttrOr("value", ""); v != "alice" {
		t.Errorf("actor filter box keeps %q", v)
	}
	_, body = p.get(c, "/admin/audit?actor=bob")
	doc = mpDoc(t, body)
	if n := doc.Find(`[data-testid=audit-row]`).Length(); n != 80 {
		t.Fatalf("bob's entries: %d, want 80", n)
	}
	if got := strings.TrimSpace(doc.Find(`[data-testid=audit-row]`).First().Find("td").Eq(2).Text()); got != "user.create" {
		t.Errorf("bob's first action %q", got)
	}
}

// TestAdminAuditKeptRowBelowLaterChange: a sign-in kept in memory while
// the database could not be written, written after a change made once it
// could, shows below that change on the audit page: where its time puts
// it, not where its (later) id did.
func TestAdminAuditKeptRowBelowLaterChange(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	st := p.srv.Store
	if err := st.QueryOnly(ctx, true); err != nil {
		t.Fatal(err)
	}
	if err := st.AuditHappened(ctx, models.AuditRecord{Actor: "alice", Action: "session.login", Target: "kept-sign-in"}); !models.Unwritable(err) {
		t.Fatalf("sign-in while unwritable: %v", err)
	}
	if err := st.QueryOnly(ctx, false); err != nil {
		t.Fatal(err)
	}
	if err := st.Audit(ctx, "bob", "price.set", "later-change", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := st.FlushKeptAudit(ctx); err != nil {
		t.Fatal(err)
	}
	c, _ := mpAdmin(t, p)
	_, body := p.get(c, "/admin/audit")
	var targets []string
	mpDoc(t, body).Find(`[data-testid=audit-row]`).Each(func(_ int, r *goquery.Selection) {
		targets = append(targets, strings.TrimSpace(r.Find("td").Eq(3).Text()))
	})
	later, kept := slices.Index(targets, "later-change"), slices.Index(targets, "kept-sign-in")
	if later < 0 || kept < 0 || later > kept {
		t.Errorf("audit page targets, newest first: %q; want later-change above kept-sign-in", targets)
	}
}

// TestAdminBillingPagesItsGroups: by workbench, 150 workbenches' lines show
// 100 groups a page with the month's total over all of them, and stable
// ?month=&group_by=&page= links.
func TestAdminBillingPagesItsGroups(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "ada", "user")
	ada, _ := p.srv.Store.UserByUsername(ctx, "ada")
	month := models.MonthStart(time.Now())
	var lines []models.LedgerEntry
	for i := 0; i < 150; i++ {
		lines = append(lines, models.LedgerEntry{IdempotencyKey: fmt.Sprintf("test:bill:%d", i), UserID: ada.ID,
			WorkbenchID: fmt.Sprintf("wb-%03d", i), Resource: "gpu", GPUModel: "NVIDIA H100 80GB HBM3",
			PeriodStart: month, PeriodEnd: month.Add(time.Hour), Seconds: 3600, QuantityMilli: 1000, RateMicros: 1_000_000, AmountMicros: 1_000_000})
	}
	if _, err := p.srv.Store.RecordBilling(ctx, 0, lines, month, true); err != nil {
		t.Fatal(err)
	}
	c, _ := mpAdmin(t, p)
	m := month.Format("2006-01")
	_, body := p.get(c, "/admin/billing?month="+m+"&group_by=workbench")
	doc := mpDoc(t, body)
	if n := doc.Find(`[data-testid=billing-row]`).Length(); n != 100 {
		t.Fatalf("page 1: %d groups, want 100", n)
	}
	if tot := strings.TrimSpace(doc.Find(`[data-testid=billing-total]`).Text()); !strings.HasPrefix(tot, "150.00") {
		t.Errorf("total %q: want the whole month's 150.00", tot)
	}
	next := doc.Find(`[data-testid=pager-next]`).AttrOr("href", "")
	if !strings.Contains(next, "group_by=workbench") || !strings.Contains(next, "month="+m) || !strings.Contains(next, "page=2") {
		t.Fatalf("next link %q", next)
	}
	_, body = p.get(c, next)
	doc = mpDoc(t, body)
	if n := doc.Find(`[data-testid=billing-row]`).Length(); n != 50 {
		t.Fatalf("page 2: %d groups, want 50", n)
	}
	if tot := strings.TrimSpace(doc.Find(`[data-testid=billing-total]`).Text()); !strings.HasPrefix(tot, "150.00") {
		t.Errorf("page 2 total %q: want the whole month's", tot)
	}
}

// TestAdminQuotasPageAndSearch: the quota console pages its users (100 a
// page; the default and the groups head page 1) and ?q= finds users and
// groups by name; a save, good or bad, comes back to the row that was
// edited even when it is not on page 1.
func TestAdminQuotasPageAndSearch(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	for i := 0; i < 130; i++ {
		name := fmt.Sprintf("qc%03d", i)
		if _, _, err := p.srv.Store.OIDCSignIn(ctx, models.OIDCIdentity{Issuer: "https://idp.test", Subject: name, Username: name}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.srv.Store.CreateGroup(ctx, "qcgroup", ""); err != nil {
		t.Fatal(err)
	}
	c, _ := mpAdmin(t, p)
	rows := func(doc *goquery.Document, scope string) int {
		return doc.Find(`[data-testid=quota-row][data-scope=` + scope + `]`).Length()
	}
	_, body := p.get(c, "/admin/quotas")
	doc := mpDoc(t, body)
	if rows(doc, "user") != 100 || rows(doc, "default") != 1 || rows(doc, "group") != 1 {
		t.Fatalf("page 1: %d users, %d default, %d groups; want 100, 1, 1", rows(doc, "user"), rows(doc, "default"), rows(doc, "group"))
	}
	next := doc.Find(`[data-testid=pager-next]`).AttrOr("href", "")
	if next != "/admin/quotas?page=2" {
		t.Fatalf("next link %q", next)
	}
	_, body = p.get(c, next)
	doc = mpDoc(t, body)
	if rows(doc, "user") != 31 || rows(doc, "default") != 0 || rows(doc, "group") != 0 {
		t.Fatalf("page 2: %d users, %d default, %d groups; want 31 (130 and the admin), 0, 0", rows(doc, "user"), rows(doc, "default"), rows(doc, "group"))
	}

	_, body = p.get(c, "/admin/quotas?q=qc12")
	doc = mpDoc(t, body)
	if rows(doc, "user") != 10 || rows(doc, "default") != 0 || rows(doc, "group") != 0 {
		t.Fatalf("q=qc12: %d users (want qc120…qc129), %d default, %d groups", rows(doc, "user"), rows(doc, "default"), rows(doc, "group"))
	}
	_, body = p.get(c, "/admin/quotas?q=qcgroup")
	doc = mpDoc(t, body)
	if rows(doc, "group") != 1 || rows(doc, "user") != 0 {
		t.Fatalf("q=qcgroup: %d groups, %d users", rows(doc, "group"), rows(doc, "user"))
	}
	_, body = p.get(c, "/admin/quotas?q=nobody-at-all")
	if doc = mpDoc(t, body); doc.Find(`[data-testid=quota-none]`).Length() != 1 {
		t.Fatalf("no match: no notice")
	}

	// qc129 is on page 2 of the unfiltered console.
	u, err := p.srv.Store.UserByUsername(ctx, "qc129")
	if err != nil {
		t.Fatal(err)
	}
	res, body := p.postFormBody(c, "/admin/quotas/users/qc129", mpQuotaForm("lots", ""))
	if res.StatusCode != http.StatusBadRequest {
		t.Fatalf("bad save: status %d", res.StatusCode)
	}
	doc = mpDoc(t, body)
	row := doc.Find(fmt.Sprintf(`#quota-user-%d`, u.ID))
	if row.Length() != 1 || row.Find(`[data-testid=error-max_gpus]`).Length() != 1 || row.Find(`input[name=max_gpus]`).AttrOr("value", "") != "lots" {
		t.Fatalf("the bad save does not come back to qc129's row with its error and value (rows %d)", row.Length())
	}
	res = p.postForm(c, "/admin/quotas/users/qc129", mpQuotaForm("3", ""))
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || loc != fmt.Sprintf("/admin/quotas?q=qc129#quota-user-%d", u.ID) {
		t.Fatalf("good save: %d to %q", res.StatusCode, loc)
	}
	if own, set, err := p.srv.Store.Quota(ctx, models.ScopeUser, u.ID); err != nil || !set || own.MaxGPUs == nil || *own.MaxGPUs != 3 {
		t.Fatalf("qc129's quota after the save: %+v set=%v err=%v", own, set, err)
	}
	// Saved from page 2 of the unfiltered console, the row returns there
	// (the admin keeps their place), not to a search for its name.
	_, body = p.get(c, "/admin/quotas?page=2")
	doc = mpDoc(t, body)
	form := doc.Find(fmt.Sprintf(`#quota-user-%d [data-testid=quota-form]`, u.ID))
	back, ok := form.Find(`input[name=back]`).Attr("value")
	if !ok || back != "page=2" {
		t.Fatalf("page 2's form carries back=%q (present %v), want page=2", back, ok)
	}
	save := mpQuotaForm("4", "")
	save.Set("back", back)
	save.Set("version", form.Find(`input[name=version]`).AttrOr("value", ""))
	res = p.postForm(c, "/admin/quotas/users/qc129", save)
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || loc != fmt.Sprintf("/admin/quotas?page=2#quota-user-%d", u.ID) {
		t.Fatalf("save from page 2: %d to %q, want back to page 2", res.StatusCode, loc)
	}
	// A filtered view is kept too; only q and page are taken from back.
	save.Set("back", "q=qc1&page=x&next=//evil.example")
	save.Set("max_gpus", "5")
	save.Del("version")
	res = p.postForm(c, "/admin/quotas/users/qc129", save)
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || loc != fmt.Sprintf("/admin/quotas?q=qc1#quota-user-%d", u.ID) {
		t.Fatalf("save from a filtered view: %d to %q", res.StatusCode, loc)
	}
}

// TestAdminWorkbenchesSearch: the admin's all-workbenches page finds
// workbenches by name or owner through its own search form (the form's
// fields, as a browser would send them), keeps the search in the box and
// in the pager's links, combines it with the state filter, and says when
// nothing matches.
func TestAdminWorkbenchesSearch(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	for _, u := range []string{"amy", "ben"} {
		owner, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: u, Password: u + "-password-1"})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"thesis", "project-" + u} {
			p.runningRecord(owner, name, models.GPUNeed{})
		}
	}
	c, _ := mpAdmin(t, p)
	_, body := p.get(c, "/admin/workbenches")
	form := mpDoc(t, body).Find(`[data-testid=workbench-filter]`)
	if form.AttrOr("method", "") != "get" || form.AttrOr("action", "") != "/admin/workbenches" || form.Find(`input[name=q]`).Length() != 1 {
		t.Fatalf("the filter form has no search field: %s", form.Text())
	}
	rows := func(query url.Values) (*goquery.Document, []string) {
		t.Helper()
		res, body := p.get(c, "/admin/workbenches?"+query.Encode())
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%v: %d", query, res.StatusCode)
		}
		doc := mpDoc(t, body)
		var names []string
		doc.Find(`[data-testid=workbench-row]`).Each(func(_ int, s *goquery.Selection) {
			names = append(names, strings.Join(strings.Fields(s.Text()), " "))
		})
		return doc, names
	}
	doc, got := rows(url.Values{"q": {"BEN"}, "state": {""}})
	if len(got) != 2 || !strings.Contains(got[0], "ben") || !strings.Contains(got[1], "ben") {
		t.Errorf("q=BEN: %q, want ben's two", got)
	}
	if v := doc.Find(`[data-testid=workbench-q]`).AttrOr("value", ""); v != "BEN" {
		t.Errorf("the search box keeps %q", v)
	}
	if _, got := rows(url.Values{"q": {"thesis"}}); len(got) != 2 {
		t.Errorf("q=thesis: %q, want both owners' thesis", got)
	}
	if _, got := rows(url.Values{"q": {"amy"}, "state": {models.StateRunning}}); len(got) != 2 {
		t.Errorf("amy's running: %q", got)
	}
	doc, got = rows(url.Values{"q": {"amy"}, "state": {models.StateStopped}})
	if len(got) != 0 || doc.Find(`[data-testid=no-match]`).Length() != 1 {
		t.Errorf("amy's stopped: %q, no-match note %d", got, doc.Find(`[data-testid=no-match]`).Length())
	}
}
