package web_test

import (
	"context"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
)

// Every link a signed-in person can follow answers: starting from the
// home page, a user's and an administrator's (in sudo mode) pages are
// crawled — each same-origin <a href> once per path and set of query
// keys — and none answers 4xx or 5xx. Links into a workbench (/wb/,
// served by its container) and the JSON API (for scripts) are left out.
// Each has a running workbench, so the admin console lists one that is not
// the admin's: a link to a page an administrator may not open is found.
func TestEveryLinkAnswers(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	alice, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "alice", Password: "alice-password", Role: models.RoleUser})
	if err != nil {
		t.Fatal(err)
	}
	admin, err := p.srv.Store.UserByUsername(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []*models.User{alice, admin} {
		p.runningRecord(u, u.Username+"-wb", models.GPUNeed{})
	}

	uc := p.client()
	p.login(uc, "alice", "alice-password")
	ac := p.client()
	p.loginSudo(ac, "admin", adminPassword)
	for who, c := range map[string]*http.Client{"alice": uc, "admin": ac} {
		pages, dead := p.crawl(c, "/", 400)
		t.Logf("%s: %d pages crawled", who, pages)
		if pages < 10 {
			t.Errorf("%s: the crawl reached only %d pages", who, pages)
		}
		for _, d := range dead {
			t.Errorf("%s: %s", who, d)
		}
	}
}

// crawl follows same-origin links from start, breadth first, up to limit
// pages, and returns how many it fetched and the links that answered 4xx
// or 5xx ("404 /path (linked from /page)").
func (p *testPortal) crawl(c *http.Client, start string, limit int) (int, []string) {
	p.t.Helper()
	type link struct{ path, from string }
	seen := map[string]bool{}
	queue := []link{{start, ""}}
	var dead []string
	n := 0
	for len(queue) > 0 && n < limit {
		l := queue[0]
		queue = queue[1:]
		res, body := p.get(c, l.path)
		n++
		if res.StatusCode >= 400 {
			dead = append(dead, res.Status+" "+l.path+" (linked from "+l.from+")")
			continue
		}
		if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			continue
		}
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
		if err != nil {
			p.t.Fatalf("%s: %v", l.path, err)
		}
		doc.Find("a[href]").Each(func(_ int, a *goquery.Selection) {
			href, _ := a.Attr("href")
			u, err := url.Parse(href)
			if err != nil || u.Host != "" || !strings.HasPrefix(u.Path, "/") ||
				strings.HasPrefix(u.Path, "/wb/") || strings.HasPrefix(u.Path, "/api/") {
				return
			}
			keys := make([]string, 0, len(u.Query()))
			for k := range u.Query() {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			if key := u.Path + "?" + strings.Join(keys, "&"); !seen[key] {
				seen[key] = true
				queue = append(queue, link{u.RequestURI(), l.path})
			}
		})
	}
	return n, dead
}
