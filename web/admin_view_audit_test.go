package web_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"workbench/models"
	"workbench/templates"
)

// An administrator's look at bob's workbench page (its log's last lines,
// history, cost) is audited as workbench.view_as_admin, once per
// administrator and workbench in 10 minutes however often the page
// reloads itself (every 5 s while the workbench starts): the row is on
// /admin/audit, and bob's page lists which administrators read it and
// when. Bob reading his own page, and another user's 404 for it, write
// nothing; the log and events APIs stay bob's (404 to the administrator),
// so they have nothing to record.
func TestAdminViewOfUsersWorkbenchIsAudited(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	base := time.Now().UTC().Truncate(time.Second)
	var offset atomic.Int64 // what the store's clock is ahead of base
	p.srv.Store.SetClock(func() time.Time { return base.Add(time.Duration(offset.Load())) })
	t.Cleanup(func() { p.srv.Store.SetClock(time.Now) })
	tokenFor(t, p, "bob", "user")
	tokenFor(t, p, "carol", "user")
	adminTok := tokenFor(t, p, "admin", "admin")
	bob, _ := p.srv.Store.UserByUsername(ctx, "bob")
	wb := p.runningRecord(bob, "thesis", models.GPUNeed{})
	if err := p.srv.Store.SetWorkbenchState(ctx, wb.ID, models.StateStarting, 50, "", nil); err != nil {
		t.Fatal(err)
	}
	page := "/workbenches/" + wb.ID
	views := func() []models.AuditEntry {
		t.Helper()
		rows, _, err := p.srv.Store.AuditPage(ctx, "workbench.view_as_admin", "", 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}

	// Bob reads his own page: nothing recorded, nothing to say.
	bc := p.client()
	p.login(bc, "bob", "bob-password")
	res, body := p.get(bc, page)
	if res.StatusCode != http.StatusOK || mpDoc(t, body).Find(`[data-testid=admin-viewed]`).Length() != 0 {
		t.Fatalf("bob's own page: %d, admin-viewed %d", res.StatusCode, mpDoc(t, body).Find(`[data-testid=admin-viewed]`).Length())
	}
	cc := p.client()
	p.login(cc, "carol", "carol-password")
	if res, _ := p.get(cc, page); res.StatusCode != http.StatusNotFound {
		t.Fatalf("carol opens bob's page: %d", res.StatusCode)
	}
	if v := views(); len(v) != 0 {
		t.Fatalf("the owner's and another user's requests were recorded as views: %+v", v)
	}

	// The administrator opens it, and it reloads itself (NoJSReload).
	ac := p.client()
	p.loginSudo(ac, "admin", adminPassword)
	for i := range 2 {
		res, body := p.get(ac, page)
		doc := mpDoc(t, body)
		// Without JavaScript it reloads itself; with it, its live region
		// refetches this same address.
		if reload := doc.Find(`noscript`).Text(); res.StatusCode != http.StatusOK || !strings.Contains(reload, `http-equiv="refresh"`) {
			t.Fatalf("admin's view %d: %d, no reload without JavaScript (noscript %q)", i, res.StatusCode, reload)
		}
		if live, _ := doc.Find(`[data-testid=admin-wb-live]`).Attr("data-live"); live != page {
			t.Fatalf("admin's view %d: its live region refetches %q, want %q", i, live, page)
		}
		if got := doc.Find(`[data-testid=admin-view-recorded]`).Text(); !strings.Contains(got, "recorded in the audit log") {
			t.Errorf("the banner does not say the look is recorded: %q", got)
		}
		offset.Add(int64(5 * time.Second))
	}
	v := views()
	if len(v) != 1 || v[0].Actor != "admin" || v[0].Target != wb.ID || !strings.Contains(v[0].After, `"owner":"bob"`) || !v[0].At.Equal(base) {
		t.Fatalf("two views 5 s apart: %+v, want one row by admin on %s naming bob at %s", v, wb.ID, base)
	}

	// It is on the audit log's page.
	_, body = p.get(ac, "/admin/audit?action=workbench.view_as_admin")
	rows := mpDoc(t, body).Find(`[data-testid=audit-row]`)
	if text := rows.Text(); rows.Length() != 1 || !strings.Contains(text, wb.ID) || !strings.Contains(text, "admin") || !strings.Contains(text, "bob") {
		t.Errorf("/admin/audit shows %d view rows: %q", rows.Length(), strings.Join(strings.Fields(text), " "))
	}

	// The log and events APIs are not an administrator's way in.
	for _, path := range []string{"/logs", "/events"} {
		if code, _ := p.apiBytes("GET", "/api/v1/workbenches/"+wb.ID+path, adminTok, ""); code != http.StatusNotFound {
			t.Errorf("admin reads bob's %s: %d", path, code)
		}
	}

	// Bob's page says so; his reading it records nothing.
	_, body = p.get(bc, page)
	want := templates.WhenIn(ctx, &base) + ", administrator admin"
	if got := strings.Join(strings.Fields(mpDoc(t, body).Find(`[data-testid=admin-viewed] [data-testid=admin-view]`).Text()), " "); got != want {
		t.Errorf("bob's page says %q, want %q", got, want)
	}
	zh, _ := p.readersSignedIn("bob", "bob-password")
	_, body = p.get(zh, page)
	if got := mpDoc(t, body).Find(`[data-testid=admin-view]`).Text(); !strings.HasPrefix(got, base.Format("2006")+"年") || !strings.HasSuffix(got, "，管理员 admin") {
		t.Errorf("bob's page in Chinese says %q", got)
	}
	if v := views(); len(v) != 1 {
		t.Errorf("%d view rows after bob's and the API reads, want 1", len(v))
	}

	// Ten minutes after the first, a look is recorded again and bob's
	// page moves on to it.
	offset.Store(int64(10 * time.Minute))
	p.sudo(ac, adminPassword)
	if res, _ := p.get(ac, page); res.StatusCode != http.StatusOK {
		t.Fatalf("admin's view 10 min later: %d", res.StatusCode)
	}
	later := base.Add(10 * time.Minute)
	if v := views(); len(v) != 2 || !v[0].At.Equal(later) {
		t.Fatalf("after 10 minutes: %+v, want a second row at %s", v, later)
	}
	_, body = p.get(bc, page)
	if got := mpDoc(t, body).Find(`[data-testid=admin-view]`).First().Text(); !strings.Contains(got, templates.WhenIn(ctx, &later)) {
		t.Errorf("bob's page after the second look lists %q first", got)
	}
}
