package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
)

// TestAdminWorkbenchesGroupFilter: an instructor picks the class in the
// all-workbenches page's group select and sees only its members'
// workbenches, a page at a time (?group= kept in the pager's links, with
// the search); a group that does not exist is said on the page, not
// ignored (everyone's workbenches under a misspelt class would read as the
// class's). The API's ?all=true&group= pages the same rows.
func TestAdminWorkbenchesGroupFilter(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	st := p.srv.Store
	ml101, err := st.CreateGroup(ctx, "ml101", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateGroup(ctx, "nlp", ""); err != nil {
		t.Fatal(err)
	}
	users := map[string]*models.User{}
	for _, u := range []string{"stu1", "stu2", "ben"} {
		users[u], err = st.CreateUser(ctx, models.NewUser{Username: u, Password: u + "-password-1"})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range []string{"stu1", "stu2"} {
		if err := st.AddGroupMember(ctx, ml101.ID, users[u].ID); err != nil {
			t.Fatal(err)
		}
	}
	// 102 of the class's (two pages), 2 of ben's.
	for i := range 101 {
		p.runningRecord(users["stu1"], fmt.Sprintf("w%03d", i), models.GPUNeed{})
	}
	p.runningRecord(users["stu2"], "thesis", models.GPUNeed{})
	p.runningRecord(users["ben"], "thesis", models.GPUNeed{})
	p.runningRecord(users["ben"], "project", models.GPUNeed{})

	c, _ := mpAdmin(t, p)
	page := func(path string, want int) (*goquery.Document, []string) {
		t.Helper()
		res, body := p.get(c, path)
		if res.StatusCode != want {
			t.Fatalf("%s: %d, want %d", path, res.StatusCode, want)
		}
		doc := mpDoc(t, body)
		var owners []string
		doc.Find(`[data-testid=workbench-row]`).Each(func(_ int, s *goquery.Selection) {
			text := strings.Join(strings.Fields(s.Text()), " ")
			for _, u := range []string{"stu1", "stu2", "ben"} {
				if strings.Contains(text, u) {
					owners = append(owners, u)
				}
			}
		})
		return doc, owners
	}

	doc, owners := page("/admin/workbenches", http.StatusOK)
	sel := doc.Find(`[data-testid=workbench-filter] select[name=group]`)
	if got := sel.Find("option").Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("value", "?") }); strings.Join(got, ",") != ",ml101,nlp" {
		t.Errorf("the group select offers %q, want all, ml101, nlp", got)
	}
	if len(owners) != 100 {
		t.Fatalf("unfiltered page 1: %d rows", len(owners))
	}

	doc, owners = page("/admin/workbenches?"+url.Values{"group": {"ml101"}, "q": {""}, "state": {""}}.Encode(), http.StatusOK)
	if len(owners) != 100 || strings.Contains(strings.Join(owners, ","), "ben") {
		t.Fatalf("group=ml101 page 1: %d rows, owners %v", len(owners), owners)
	}
	if v := doc.Find(`select[name=group] option[selected]`).AttrOr("value", ""); v != "ml101" {
		t.Errorf("the select shows %q, want ml101", v)
	}
	next := doc.Find(`[data-testid=pager-next]`).AttrOr("href", "")
	if q, _ := url.Parse(next); q == nil || q.Query().Get("group") != "ml101" || q.Query().Get("page") != "2" {
		t.Fatalf("next link %q does not keep the group", next)
	}
	if _, owners = page(next, http.StatusOK); len(owners) != 2 || strings.Contains(strings.Join(owners, ","), "ben") {
		t.Errorf("group=ml101 page 2: %v, want the class's last 2", owners)
	}
	if n := doc.Find(`[data-testid=stop-all] input[name=group][value=ml101]`).Length(); n != 1 {
		t.Errorf("the class's list offers Stop all shown %d times, want 1", n)
	}
	doc, owners = page("/admin/workbenches?group=ml101&q=thesis", http.StatusOK)
	if strings.Join(owners, ",") != "stu2" {
		t.Errorf("group=ml101&q=thesis: %v, want stu2's thesis only", owners)
	}
	// With a search it would stop more than is shown: not offered.
	if n := doc.Find(`[data-testid=stop-all]`).Length(); n != 0 {
		t.Errorf("Stop all shown offered with a search")
	}
	doc, owners = page("/admin/workbenches?group=nlp", http.StatusOK)
	if len(owners) != 0 || doc.Find(`[data-testid=no-match]`).Length() != 1 {
		t.Errorf("group=nlp (no members): %v, no-match note %d", owners, doc.Find(`[data-testid=no-match]`).Length())
	}

	doc, owners = page("/admin/workbenches?group=ml1O1", http.StatusNotFound)
	if note := doc.Find(`[data-testid=unknown-group]`).Text(); len(owners) != 0 || !strings.Contains(note, `"ml1O1"`) {
		t.Errorf("an unknown group: rows %v, note %q; want none and the name said", owners, note)
	}

	// The API: the class's workbenches a page at a time.
	admin := tokenFor(t, p, "admin", "admin")
	next = "/api/v1/workbenches?all=true&group=ml101&limit=60"
	seen := map[string]int{}
	for next != "" {
		code, body := p.api("GET", next, admin, "")
		if code != 200 {
			t.Fatalf("%s: %d %v", next, code, body)
		}
		for _, it := range body["items"].([]any) {
			seen[it.(map[string]any)["owner"].(string)]++
		}
		next, _ = body["next"].(string)
	}
	if seen["stu1"] != 101 || seen["stu2"] != 1 || seen["ben"] != 0 {
		t.Errorf("API group=ml101 owners %v, want stu1 101, stu2 1", seen)
	}
	if code, body := p.api("GET", "/api/v1/workbenches?all=true&group=ml1O1", admin, ""); code != 400 || errCode(body) != "unknown_group" {
		t.Errorf("API unknown group: %d %v", code, body)
	}
	if code, body := p.api("GET", "/api/v1/workbenches?group=ml101", admin, ""); code != 400 || errCode(body) != "invalid_group" {
		t.Errorf("API group without all=true: %d %v", code, body)
	}
}
