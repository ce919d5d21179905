package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
)

// Every form control on every page has a label: it sits inside a <label>,
// a <label for> names its id, or it carries aria-label / aria-labelledby.
// Hidden inputs and buttons (labelled by their text) are not controls a
// person fills in.
func TestEveryFormControlHasALabel(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tokenFor(t, p, "alice", "user")
	alice, _ := p.srv.Store.UserByUsername(ctx, "alice")
	wb := &models.Workbench{Name: "w1", OwnerID: alice.ID, ImageID: 1, FlavorID: 1}
	if err := p.srv.Store.CreateWorkbench(ctx, wb, models.GPUNeed{}, nil); err != nil {
		t.Fatal(err)
	}
	ac, _ := mpAdmin(t, p)
	uc := p.client()
	p.login(uc, "alice", "alice-password")

	check := func(c *http.Client, path string) {
		t.Helper()
		res, body := p.get(c, path)
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d", path, res.StatusCode)
			return
		}
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		doc.Find(`input, select, textarea`).Each(func(_ int, s *goquery.Selection) {
			if typ, _ := s.Attr("type"); typ == "hidden" || typ == "submit" || typ == "button" {
				return
			}
			n++
			if labelled(doc, s) {
				return
			}
			name, _ := s.Attr("name")
			html, _ := goquery.OuterHtml(s)
			t.Errorf("%s: control %q has no label: %s", path, name, html)
		})
		if n == 0 && (path == "/workbenches/new" || path == "/admin/flavors/new") {
			t.Errorf("%s: no form controls found", path)
		}
	}
	for _, path := range []string{"/", "/workbenches/new", "/workbenches/" + wb.ID, "/gpus", "/catalog", "/usage",
		"/settings/tokens", "/calculator"} {
		check(uc, path)
	}
	for _, path := range []string{"/admin/users", "/admin/groups", "/admin/audit", "/admin/workbenches", "/admin/images/new",
		"/admin/flavors/new", "/admin/quotas", "/admin/prices", "/admin/billing", "/admin/cloud-prices", "/admin/cloud-prices/new", "/gpus"} {
		check(ac, path)
	}
	check(p.client(), "/login")
}

func labelled(doc *goquery.Document, s *goquery.Selection) bool {
	if v, ok := s.Attr("aria-label"); ok && strings.TrimSpace(v) != "" {
		return true
	}
	if v, ok := s.Attr("aria-labelledby"); ok && strings.TrimSpace(v) != "" {
		return true
	}
	if s.ParentsFiltered("label").Length() > 0 {
		return true
	}
	if id, ok := s.Attr("id"); ok && id != "" {
		return doc.Find(`label[for="`+id+`"]`).Length() > 0
	}
	return false
}
