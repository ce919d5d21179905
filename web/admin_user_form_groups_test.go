package web_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
)

// The users page's add-user form puts the new account in the groups ticked,
// as POST /api/v1/admin/users's "groups" does (one transaction, each
// membership audited as group.add_member), and its flash names them. A
// group deleted between loading the page and posting it refuses the form:
// the page says which, keeps what was typed and ticked (the gone group
// ticked and marked), and nothing is created. A Chinese reader gets the
// refusal in Chinese.
func TestAdminUserFormAddsToGroups(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	st := p.srv.Store
	var old *models.Group
	for _, name := range []string{"ml101", "gpu-lab", "old-course"} {
		g, err := st.CreateGroup(ctx, name, "")
		if err != nil {
			t.Fatal(err)
		}
		old = g
	}
	c := p.client()
	p.loginSudo(c, "admin", adminPassword)
	_, body := p.get(c, "/admin/users")
	var offered []string
	parseHTML(t, body).Find(`[data-testid=new-user-form] input[type=checkbox][name=groups]`).Each(func(_ int, s *goquery.Selection) {
		offered = append(offered, s.AttrOr("value", ""))
	})
	slices.Sort(offered)
	if !slices.Equal(offered, []string{"gpu-lab", "ml101", "old-course"}) {
		t.Fatalf("the form offers the groups %v, want every group", offered)
	}

	res := p.postForm(c, "/admin/users", url.Values{"username": {"stud01"}, "role": {"user"}, "password": {"stud01-password"},
		"groups": {"ml101", "gpu-lab"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("add with two groups: status %d", res.StatusCode)
	}
	_, body = p.get(c, "/admin/users")
	doc := parseHTML(t, body)
	if got := doc.Find(`[data-testid=flash]`).Text(); !strings.Contains(got, "User stud01 added to the groups ml101, gpu-lab.") {
		t.Errorf("flash %q, want it to name both groups", got)
	}
	var tags []string
	doc.Find(`[data-testid=user-row][data-username=stud01] .tag`).Each(func(_ int, s *goquery.Selection) { tags = append(tags, s.Text()) })
	slices.Sort(tags)
	if !slices.Equal(tags, []string{"gpu-lab", "ml101"}) {
		t.Errorf("stud01's row lists the groups %v", tags)
	}
	for _, name := range []string{"ml101", "gpu-lab"} {
		if g, _ := st.GroupByName(ctx, name); !slices.Equal(g.Members, []string{"stud01"}) {
			t.Errorf("%s members %v, want [stud01]", name, g.Members)
		}
	}
	entries, err := st.ListAudit(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	var joins []string
	for _, e := range entries {
		if e.Action == "group.add_member" && e.Actor == "admin" {
			joins = append(joins, e.Target+" "+e.After)
		}
	}
	slices.Sort(joins)
	if !slices.Equal(joins, []string{`gpu-lab {"username":"stud01"}`, `ml101 {"username":"stud01"}`}) {
		t.Errorf("group.add_member rows %q, want one per group", joins)
	}

	// The page was loaded with old-course; it is deleted before the post.
	if _, err := st.DeleteGroup(ctx, old.ID); err != nil {
		t.Fatal(err)
	}
	form := url.Values{"username": {"stud02"}, "display_name": {"Stu Two"}, "role": {"admin"}, "password": {"stud02-password"},
		"groups": {"ml101", "old-course"}}
	res, body = p.postFormBody(c, "/admin/users", form)
	doc = parseHTML(t, body)
	if res.StatusCode != http.StatusBadRequest {
		t.Fatalf("a deleted group: status %d, want 400", res.StatusCode)
	}
	if got := doc.Find(`[data-testid=error-groups]`).Text(); !strings.Contains(got, `there is no group "old-course"`) {
		t.Errorf("the error shown is %q, want it to name old-course", got)
	}
	if v := doc.Find(`[data-testid=new-user-form] input[name=username]`).AttrOr("value", ""); v != "stud02" {
		t.Errorf("the username typed is lost: %q", v)
	}
	if v := doc.Find(`[data-testid=new-user-form] input[name=display_name]`).AttrOr("value", ""); v != "Stu Two" {
		t.Errorf("the display name typed is lost: %q", v)
	}
	if v := doc.Find(`[data-testid=new-user-form] select[name=role] option[selected]`).AttrOr("value", ""); v != "admin" {
		t.Errorf("the role chosen is lost: %q selected", v)
	}
	checked := map[string]bool{}
	doc.Find(`[data-testid=new-user-form] input[name=groups]`).Each(func(_ int, s *goquery.Selection) {
		_, on := s.Attr("checked")
		checked[s.AttrOr("value", "")] = on
	})
	if !checked["ml101"] || checked["gpu-lab"] || !checked["old-course"] {
		t.Errorf("groups ticked after the refusal %v, want ml101 and old-course as posted", checked)
	}
	if gone := doc.Find(`[data-testid=new-user-group-gone]`); gone.Length() != 1 || gone.Parent().Find(`input`).AttrOr("value", "") != "old-course" {
		t.Errorf("the deleted group is not marked as gone (%d marks)", gone.Length())
	}
	if _, err := st.UserByUsername(ctx, "stud02"); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("the refused form created stud02 (err %v)", err)
	}
	if g, _ := st.GroupByName(ctx, "ml101"); !slices.Equal(g.Members, []string{"stud01"}) {
		t.Errorf("ml101 after the refused form: %v", g.Members)
	}

	zh, _ := p.readersSignedIn("admin", adminPassword)
	p.sudo(zh, adminPassword)
	res, body = p.postFormBody(zh, "/admin/users", form)
	doc = parseHTML(t, body)
	if got := doc.Find(`[data-testid=error-groups]`).Text(); res.StatusCode != http.StatusBadRequest || !strings.Contains(got, `没有名为 "old-course" 的用户组`) {
		t.Errorf("a Chinese reader: %d, error %q", res.StatusCode, got)
	}
	if got := doc.Find(`[data-testid=new-user-group-gone]`).Text(); got != "已不存在" {
		t.Errorf("a Chinese reader: the gone mark reads %q", got)
	}
}
