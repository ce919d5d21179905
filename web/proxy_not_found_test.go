package web_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
	"workbench/web"
)

// TestNotebookAddressOfNoWorkbenchIsThePortalsPage: a bookmark of a
// deleted workbench's notebook (/wb/{id}/…) opens the portal's own 404
// page — layout, navigation, a way back to the list — where it read a bare
// "Not found". Someone else's workbench and an id that never was answer
// the very same page, so an id cannot be probed; the page has the portal
// pages' security headers. Scripts keep the short 404.
func TestNotebookAddressOfNoWorkbenchIsThePortalsPage(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "alice", "user")
	tokenFor(t, p, "bob", "user")
	alice, _ := p.srv.Store.UserByUsername(ctx, "alice")
	bob, _ := p.srv.Store.UserByUsername(ctx, "bob")
	deleted := p.runningRecord(alice, "old", models.GPUNeed{})
	if err := p.srv.Manager.Delete(ctx, deleted.ID, alice, false); err != nil {
		t.Fatalf("delete alice's workbench: %v", err)
	}
	bobs := p.runningRecord(bob, "bobs", models.GPUNeed{})
	c := p.client()
	p.login(c, "alice", "alice-password")
	home, _ := p.get(c, "/")

	type answer struct {
		status  int
		headers http.Header
		main    string
	}
	open := func(id string) answer {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, p.ts.URL+"/wb/"+id+"/lab/tree/work.ipynb", nil)
		req.Header.Set("Accept", "text/html,application/xhtml+xml")
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return answer{res.StatusCode, res.Header, notFoundSection(t, "/wb/"+id+"/", string(b))}
	}
	gone, others, never := open(deleted.ID), open(bobs.ID), open("abcdefghijklm")
	if gone.status != http.StatusNotFound {
		t.Fatalf("a deleted workbench's notebook: status %d, want 404", gone.status)
	}
	if !strings.Contains(gone.main, "deleted") {
		t.Errorf("the page does not say the workbench may have been deleted: %s", gone.main)
	}
	for name, a := range map[string]answer{"someone else's": others, "never there": never} {
		if a.status != gone.status || a.main != gone.main {
			t.Errorf("%s: %d %q; a deleted one of one's own: %d %q — want the same answer", name, a.status, a.main, gone.status, gone.main)
		}
	}
	// The portal pages' security headers.
	for _, k := range []string{"Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options", "Cross-Origin-Opener-Policy"} {
		if got, want := gone.headers.Get(k), home.Header.Get(k); got == "" || got != want {
			t.Errorf("%s: %q, the portal's pages send %q", k, got, want)
		}
	}
	if got := gone.headers.Get("Referrer-Policy"); got != "strict-origin" {
		t.Errorf("Referrer-Policy %q, want strict-origin (its forms must not read as a notebook's)", got)
	}
	if got := gone.headers.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", got)
	}
	for name, a := range map[string]answer{"someone else's": others, "never there": never} {
		for _, k := range []string{"Content-Security-Policy", "X-Frame-Options", "Referrer-Policy", "Content-Type"} {
			if a.headers.Get(k) != gone.headers.Get(k) {
				t.Errorf("%s: %s %q, a deleted one's %q", name, k, a.headers.Get(k), gone.headers.Get(k))
			}
		}
	}

	// A script (no text/html) keeps the short answer.
	if res, body := p.get(c, "/wb/"+deleted.ID+"/api/status"); res.StatusCode != http.StatusNotFound || strings.Contains(body, "<html") {
		t.Errorf("a script: %d %q, want the short 404", res.StatusCode, body)
	}
}

// notFoundSection checks that body is the portal's page (its navigation,
// the account, a link back to the list in the error) and returns the
// error's markup.
func notFoundSection(t *testing.T, what, body string) string {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if n := doc.Find(`nav.mainnav a[href="/"]`).Length(); n != 1 {
		t.Errorf("%s: %d links to the workbenches in the navigation, want the portal's layout", what, n)
	}
	if name := doc.Find(`[data-testid=account-name]`).Text(); name == "" {
		t.Errorf("%s: no account in the top bar", what)
	}
	sec := doc.Find(`[data-testid=error]`)
	if sec.Find(`a[href="/"]`).Length() != 1 {
		t.Errorf("%s: the error has no link back to the list", what)
	}
	h, _ := sec.Html()
	return h
}

// TestNotebookDomainAddressOfNoWorkbenchIsThePortalsPage: with a notebook
// domain, /wb/{id}/… on the portal's host (where a notebook host sends a
// browser to sign in, and old path-mode bookmarks land) answers the same
// portal 404 page for a deleted workbench, someone else's and an id that
// never was.
func TestNotebookDomainAddressOfNoWorkbenchIsThePortalsPage(t *testing.T) {
	np := startNBPortal(t, func(mutate func(*web.Config)) *testPortal { return newPortal(t, mutate) })
	ctx := context.Background()
	tokenFor(t, np.testPortal, "alice", "user")
	tokenFor(t, np.testPortal, "bob", "user")
	alice, _ := np.srv.Store.UserByUsername(ctx, "alice")
	bob, _ := np.srv.Store.UserByUsername(ctx, "bob")
	deleted := np.runningRecord(alice, "old", models.GPUNeed{})
	if err := np.srv.Manager.Delete(ctx, deleted.ID, alice, false); err != nil {
		t.Fatalf("delete alice's workbench: %v", err)
	}
	bobs := np.runningRecord(bob, "bobs", models.GPUNeed{})
	c := np.client()
	np.login(c, "alice", "alice-password")
	html := map[string]string{"Accept": "text/html,application/xhtml+xml"}
	var first string
	for i, id := range []string{deleted.ID, bobs.ID, "abcdefghijklm"} {
		res, body := np.do(c, "GET", np.portal+"/wb/"+id+"/lab", html)
		if res.StatusCode != http.StatusNotFound || res.Header.Get("X-Frame-Options") != "DENY" || res.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("/wb/%s/: %d, X-Frame-Options %q, Content-Security-Policy %q; want the portal's 404 page",
				id, res.StatusCode, res.Header.Get("X-Frame-Options"), res.Header.Get("Content-Security-Policy"))
		}
		sec := notFoundSection(t, "/wb/"+id+"/", body)
		if i == 0 {
			first = sec
		} else if sec != first {
			t.Errorf("/wb/%s/: %q, a deleted one's %q: want the same answer", id, sec, first)
		}
	}
}
