package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
	"workbench/templates"
)

// Bob's workbench page lists the administrators' recent looks at it, not
// only the last: two administrators look at it over an hour (one look per
// administrator and 10 minutes is recorded), and bob reads the newest five,
// newest first, who and when in his zone and language, then "and 2 earlier
// views"; a look 100 days ago is neither listed nor counted. His GET
// /api/v1/workbenches/{id} says the same (admin_views, admin_views_earlier).
// Carol gets a 404 for his page, an administrator's own view of it lists
// no looks, and neither the list API nor an administrator's API read of
// bob's workbench carries them.
func TestOwnerSeesRecentAdminViews(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	base := time.Now().UTC().Truncate(time.Minute)
	var offset atomic.Int64 // what the store's clock is ahead of base
	p.srv.Store.SetClock(func() time.Time { return base.Add(time.Duration(offset.Load())) })
	t.Cleanup(func() { p.srv.Store.SetClock(time.Now) })
	bobTok := tokenFor(t, p, "bob", "user")
	tokenFor(t, p, "carol", "user")
	adminTok := tokenFor(t, p, "admin", "admin")
	tokenFor(t, p, "eve", "admin")
	bob, _ := p.srv.Store.UserByUsername(ctx, "bob")
	if err := p.srv.Store.SetUserTimeZone(ctx, bob.ID, "Asia/Shanghai"); err != nil {
		t.Fatal(err)
	}
	wb := p.runningRecord(bob, "thesis", models.GPUNeed{})
	page := "/workbenches/" + wb.ID

	ac, ec := p.client(), p.client()
	p.loginSudo(ac, "admin", adminPassword)
	p.loginSudo(ec, "eve", "eve-password")
	look := func(c *http.Client, after time.Duration) {
		t.Helper()
		offset.Store(int64(after))
		if res, _ := p.get(c, page); res.StatusCode != http.StatusOK {
			t.Fatalf("a look at %s: %d", after, res.StatusCode)
		}
	}
	look(ac, -100*24*time.Hour) // outside the 90 days
	looks := []struct {
		c       *http.Client
		by      string
		after   time.Duration
		written bool
	}{
		{ac, "admin", 0, true},
		{ec, "eve", time.Minute, true},
		{ac, "admin", 5 * time.Minute, false}, // within admin's 10 minutes
		{ac, "admin", 10 * time.Minute, true},
		{ec, "eve", 20 * time.Minute, true},
		{ac, "admin", 30 * time.Minute, true},
		{ec, "eve", 40 * time.Minute, true},
		{ec, "eve", 45 * time.Minute, false},
		{ac, "admin", 50 * time.Minute, true},
	}
	for _, l := range looks {
		look(l.c, l.after)
	}
	offset.Store(int64(time.Hour))

	// Bob's page, in English: the newest five, newest first, in his zone.
	shanghai, _ := time.LoadLocation("Asia/Shanghai")
	zoned := templates.WithTimeZone(ctx, shanghai)
	var want []string
	for i := len(looks) - 1; i >= 0 && len(want) < 5; i-- {
		if at := base.Add(looks[i].after); looks[i].written {
			want = append(want, templates.WhenIn(zoned, &at)+", administrator "+looks[i].by)
		}
	}
	bc := p.client()
	p.login(bc, "bob", "bob-password")
	_, body := p.get(bc, page)
	doc := mpDoc(t, body)
	var got []string
	doc.Find(`[data-testid=admin-viewed] [data-testid=admin-view]`).Each(func(_ int, s *goquery.Selection) {
		got = append(got, strings.Join(strings.Fields(s.Text()), " "))
	})
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("bob's page lists\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if !strings.Contains(want[0], "UTC+8") {
		t.Errorf("the times are not in bob's zone: %q", want[0])
	}
	if got := doc.Find(`[data-testid=admin-views-earlier]`).Text(); got != "and 2 earlier views" {
		t.Errorf("earlier looks: %q, want %q", got, "and 2 earlier views")
	}
	if got := doc.Find(`[data-testid=admin-viewed] p`).Text(); !strings.Contains(got, "last 90 days") {
		t.Errorf("the list does not say its window: %q", got)
	}

	// In Chinese.
	zh, _ := p.readersSignedIn("bob", "bob-password")
	_, body = p.get(zh, page)
	doc = mpDoc(t, body)
	first := doc.Find(`[data-testid=admin-view]`).First().Text()
	if !strings.HasPrefix(first, base.Format("2006")+"年") || !strings.HasSuffix(first, "，管理员 admin") || !strings.Contains(first, "UTC+8") {
		t.Errorf("bob's page in Chinese lists %q first", first)
	}
	if got := doc.Find(`[data-testid=admin-views-earlier]`).Text(); got != "以及更早的 2 次" {
		t.Errorf("earlier looks in Chinese: %q", got)
	}

	// The API: bob's own read carries the looks, UTC; nothing else does.
	code, raw := p.apiBytes("GET", "/api/v1/workbenches/"+wb.ID, bobTok, "")
	var own struct {
		AdminViews []struct {
			By string `json:"by"`
			At string `json:"at"`
		} `json:"admin_views"`
		Earlier *int64 `json:"admin_views_earlier"`
	}
	if err := json.Unmarshal(raw, &own); code != http.StatusOK || err != nil {
		t.Fatalf("bob's GET: %d %v %s", code, err, raw)
	}
	last := base.Add(50 * time.Minute).Format(time.RFC3339)
	if len(own.AdminViews) != 5 || own.AdminViews[0].By != "admin" || own.AdminViews[0].At != last ||
		own.AdminViews[1].By != "eve" || own.Earlier == nil || *own.Earlier != 2 {
		t.Errorf("bob's API read: %s", raw)
	}
	for _, path := range []string{"/api/v1/workbenches/" + wb.ID, "/api/v1/workbenches?all=true"} {
		if code, raw := p.apiBytes("GET", path, adminTok, ""); code != http.StatusOK || strings.Contains(string(raw), "admin_views") {
			t.Errorf("admin's GET %s: %d, %s", path, code, raw)
		}
	}
	if code, raw := p.apiBytes("GET", "/api/v1/workbenches", bobTok, ""); code != http.StatusOK || strings.Contains(string(raw), "admin_views") {
		t.Errorf("bob's list: %d, %s", code, raw)
	}

	// Nobody but bob reads the list.
	cc := p.client()
	p.login(cc, "carol", "carol-password")
	if res, body := p.get(cc, page); res.StatusCode != http.StatusNotFound || strings.Contains(body, "admin-view\"") {
		t.Errorf("carol opens bob's page: %d", res.StatusCode)
	}
	if _, body := p.get(ac, page); mpDoc(t, body).Find(`[data-testid=admin-viewed], [data-testid=admin-view]`).Length() != 0 {
		t.Error("the administrator's view of bob's page lists the looks")
	}
}
