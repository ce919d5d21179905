package web_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"workbench/handlers"
	"workbench/models"
)

// apiPage GETs one page of an API list with a bearer token and decodes it
// strictly; the Link header must name the same next page as the body.
func apiPage[T any](t *testing.T, p *testPortal, token, path string) handlers.APIPage[T] {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, p.ts.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, res.StatusCode, b)
	}
	var page handlers.APIPage[T]
	if err := strictDecode(b, &page); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	link := res.Header.Get("Link")
	switch {
	case page.Next == nil && (link != "" || page.NextCursor != nil):
		t.Fatalf("GET %s: last page, yet Link %q and next_cursor %v", path, link, page.NextCursor)
	case page.Next != nil && link != "<"+*page.Next+`>; rel="next"`:
		t.Fatalf("GET %s: Link %q does not name next %q", path, link, *page.Next)
	case page.Next != nil && (page.NextCursor == nil || !strings.Contains(*page.Next, "cursor="+url.QueryEscape(*page.NextCursor))):
		t.Fatalf("GET %s: next %q does not carry next_cursor %v", path, *page.Next, page.NextCursor)
	}
	return page
}

// walk follows a list's next links from first, calling between (if any)
// after each page but the last, and returns every item and the page sizes.
func walk[T any](t *testing.T, p *testPortal, token, first string, between func(page int)) ([]T, []int) {
	t.Helper()
	var items []T
	var sizes []int
	path := first
	for n := 1; ; n++ {
		page := apiPage[T](t, p, token, path)
		items = append(items, page.Items...)
		sizes = append(sizes, len(page.Items))
		if page.Next == nil {
			return items, sizes
		}
		if n > 50 {
			t.Fatalf("%s: more than 50 pages", first)
		}
		if between != nil {
			between(n)
		}
		path = *page.Next
	}
}

// TestAPIUsersPageByCursor: 130 accounts come 100 a page by default (the
// next page by its cursor, in the body and the Link header), by id; the
// pages of a walk during which accounts are made hold every account once,
// the new ones on the last page.
func TestAPIUsersPageByCursor(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	add := func(name string) {
		// As single sign-on makes them: no password to hash.
		if _, _, err := p.srv.Store.OIDCSignIn(ctx, models.OIDCIdentity{Issuer: "https://idp.test", Subject: name, Username: name}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 130 {
		add(fmt.Sprintf("pg%03d", i))
	}
	admin := tokenFor(t, p, "root", "admin")
	added := 0
	got, sizes := walk[handlers.APIUser](t, p, admin, "/api/v1/admin/users", func(int) {
		for range 3 {
			added++
			add(fmt.Sprintf("new%03d", added))
		}
	})
	if len(sizes) < 2 || sizes[0] != 100 {
		t.Fatalf("page sizes %v: want 100 on the first page", sizes)
	}
	all, err := p.srv.Store.ListUsers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var want []int64
	for _, u := range all {
		want = append(want, u.ID)
	}
	slices.Sort(want)
	var ids []int64
	for _, u := range got {
		ids = append(ids, u.ID)
	}
	if !slices.Equal(ids, want) {
		t.Fatalf("the walk's %d users are not the %d accounts by id, each once:\n got %v\nwant %v", len(ids), len(want), ids, want)
	}
	// A small limit pages the same list.
	small, sizes := walk[handlers.APIUser](t, p, admin, "/api/v1/admin/users?limit=40", nil)
	if len(small) != len(want) || sizes[0] != 40 {
		t.Fatalf("limit=40: %d users in pages %v, want %d", len(small), sizes, len(want))
	}
}

// TestAPIWorkbenchesPageByCursor: an admin's ?all=true list pages newest
// first, the next link keeping all= and limit=; a walk during which a
// workbench is made (newest: on a page already read) and one not yet
// reached is deleted returns every other workbench once, in order. An
// owner's walk holds only their own.
func TestAPIWorkbenchesPageByCursor(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "ada", "user")
	tokenFor(t, p, "bob", "user")
	ada, _ := p.srv.Store.UserByUsername(ctx, "ada")
	bob, _ := p.srv.Store.UserByUsername(ctx, "bob")
	for i := range 13 {
		owner := ada
		if i%3 == 0 {
			owner = bob
		}
		p.runningRecord(owner, fmt.Sprintf("wb%02d", i), models.GPUNeed{})
	}
	before, err := p.srv.Store.ListWorkbenches(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	gone := before[len(before)-2].ID // on the last page
	var want []string
	for _, wb := range before {
		if wb.ID != gone {
			want = append(want, wb.ID)
		}
	}
	admin := tokenFor(t, p, "root", "admin")
	first := apiPage[handlers.APIWorkbench](t, p, admin, "/api/v1/workbenches?all=true&limit=5")
	if first.Next == nil || !strings.Contains(*first.Next, "all=true") || !strings.Contains(*first.Next, "limit=5") {
		t.Fatalf("next %v lost the request's parameters", first.Next)
	}
	got, sizes := walk[handlers.APIWorkbench](t, p, admin, "/api/v1/workbenches?all=true&limit=5", func(page int) {
		if page == 1 {
			p.runningRecord(ada, "late", models.GPUNeed{})
			if err := p.srv.Store.MarkWorkbenchDeleted(ctx, gone, time.Time{}); err != nil {
				t.Fatal(err)
			}
		}
	})
	var ids []string
	for _, wb := range got {
		ids = append(ids, wb.ID)
	}
	if !slices.Equal(ids, want) || !slices.Equal(sizes, []int{5, 5, 2}) {
		t.Fatalf("walk in pages %v:\n got %v\nwant %v", sizes, ids, want)
	}
	tok := tokenFor(t, p, "ada", "user")
	mine, _ := walk[handlers.APIWorkbench](t, p, tok, "/api/v1/workbenches?limit=3", nil)
	for _, wb := range mine {
		if wb.Owner != "ada" {
			t.Errorf("ada's list holds %s's %s", wb.Owner, wb.Name)
		}
	}
	if n := len(mine); n != 8 { // 8 of the 13, less wb01 deleted, and "late"
		t.Errorf("ada's walk: %d workbenches, want 8", n)
	}
}

// TestAPINotificationsPageByCursor: the first page is the newest 100, as
// the list answered before it paged; older ones follow by cursor, and
// notices arriving during the walk (newer: before the cursor) repeat none.
func TestAPINotificationsPageByCursor(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tok := tokenFor(t, p, "ada", "user")
	ada, _ := p.srv.Store.UserByUsername(ctx, "ada")
	note := func(m string) {
		if err := p.srv.Store.AddNotification(ctx, ada.ID, m, "/"); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 230 {
		note(fmt.Sprintf("n%03d", i))
	}
	got, sizes := walk[handlers.APINotification](t, p, tok, "/api/v1/notifications", func(int) { note("during the walk") })
	if !slices.Equal(sizes, []int{100, 100, 30}) {
		t.Fatalf("page sizes %v", sizes)
	}
	for i, n := range got {
		if want := fmt.Sprintf("n%03d", 229-i); n.Message != want {
			t.Fatalf("item %d is %q, want %q (newest first, each once)", i, n.Message, want)
		}
	}
}

// TestAPIListPagingRefusesBadInput: a limit that is no whole number from 1
// to 1000 is 400 invalid_limit; a cursor the list did not give (garbled,
// empty, another list's) is 400 invalid_cursor; both are parameters of the
// paged lists only.
func TestAPIListPagingRefusesBadInput(t *testing.T) {
	p := newPortal(t)
	tok := tokenFor(t, p, "ada", "user")
	admin := tokenFor(t, p, "root", "admin")
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	cases := []struct{ token, path, code string }{
		{admin, "/api/v1/admin/users?limit=0", "invalid_limit"},
		{admin, "/api/v1/admin/users?limit=1001", "invalid_limit"},
		{admin, "/api/v1/admin/users?limit=ten", "invalid_limit"},
		{admin, "/api/v1/admin/users?limit=", "invalid_limit"},
		{admin, "/api/v1/admin/users?limit=5&limit=6", "invalid_limit"},
		{tok, "/api/v1/workbenches?limit=-3", "invalid_limit"},
		{tok, "/api/v1/notifications?limit=1e3", "invalid_limit"},
		{admin, "/api/v1/admin/users?cursor=%21%21", "invalid_cursor"},
		{admin, "/api/v1/admin/users?cursor=", "invalid_cursor"},
		{admin, "/api/v1/admin/users?cursor=" + b64("users:x"), "invalid_cursor"},
		{admin, "/api/v1/admin/users?cursor=" + b64("users:-4"), "invalid_cursor"},
		{tok, "/api/v1/notifications?cursor=" + b64("users:12"), "invalid_cursor"},
		{tok, "/api/v1/workbenches?cursor=" + b64("workbenches:yesterday wb-1"), "invalid_cursor"},
		{tok, "/api/v1/workbenches?cursor=" + b64("workbenches:2030-01-01T00:00:00Z"), "invalid_cursor"},
		{tok, "/api/v1/tokens?limit=5", "unknown_parameter"},
	}
	for _, tc := range cases {
		code, body := p.api("GET", tc.path, tc.token, "")
		if code != http.StatusBadRequest || errCode(body) != tc.code {
			t.Errorf("GET %s: %d %v, want 400 %s", tc.path, code, body, tc.code)
		}
	}
	// A good cursor of the list itself is taken.
	if code, body := p.api("GET", "/api/v1/notifications?limit=1000&cursor="+b64("notifications:12"), tok, ""); code != http.StatusOK {
		t.Errorf("a well-formed cursor: %d %v", code, body)
	}
	var raw map[string]json.RawMessage
	_, b := p.apiBytes("GET", "/api/v1/notifications", tok, "")
	if err := json.Unmarshal(b, &raw); err != nil || string(raw["next"]) != "null" || string(raw["next_cursor"]) != "null" {
		t.Errorf("a one-page list says next and next_cursor null: %s", b)
	}
}
