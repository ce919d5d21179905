package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// A lab admin renames a group and deletes one at the end of a course, in
// Chromium with script on and off (the forms work without it): a wrong
// confirmation is said beside the form and deletes nothing; the right one
// deletes the group with its quota, and its members stay.
func TestBrowserRenameAndDeleteGroup(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) { testBrowserRenameAndDeleteGroup(t, js) })
	}
}

func testBrowserRenameAndDeleteGroup(t *testing.T, js bool) {
	p, b := btAdminIn(t, js)
	ctx := context.Background()
	st := p.srv.Store
	tokenFor(t, p, "kim", "user")
	kim, _ := st.UserByUsername(ctx, "kim")
	g, err := st.CreateGroup(ctx, "cv-2025", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AddGroupMember(ctx, g.ID, kim.ID); err != nil {
		t.Fatal(err)
	}
	two := int64(2)
	if err := st.SetQuota(ctx, models.ScopeGroup, g.ID, models.Limits{MaxGPUs: &two}, "admin"); err != nil {
		t.Fatal(err)
	}

	btNavigate(t, b, p.ts.URL+"/admin/groups")
	card := `[data-testid=group-card]` // the only group
	btDo(t, b, "open Rename", chromedp.Click(chromedp.CSS(card+` [data-testid=group-rename] summary`)))
	btDo(t, b, "type the new name",
		chromedp.Clear(chromedp.CSS(card+` [data-testid=group-rename] input[name=name]`)),
		chromedp.SendKeys(chromedp.CSS(card+` [data-testid=group-rename] input[name=name]`), "视觉 2026"))
	resp := btSubmit(t, b, "click Save", chromedp.Click(chromedp.CSS(card+` [data-testid=group-rename-submit]`)))
	btConfirmSudo(t, b, resp, btAdminPassword)
	if msg := btText(t, b, `[data-testid=flash]`); msg != "Group cv-2025 renamed to 视觉 2026." {
		t.Fatalf("flash after rename: %q", msg)
	}
	if got := btText(t, b, card+` h3`); got != "视觉 2026" {
		t.Fatalf("the card reads %q after the rename", got)
	}
	if lim, set, err := st.Quota(ctx, models.ScopeGroup, g.ID); err != nil || !set || lim.MaxGPUs == nil || *lim.MaxGPUs != 2 {
		t.Fatalf("the quota did not follow the rename: %+v %v %v", lim, set, err)
	}

	// Delete with the wrong name typed: refused beside the form.
	btDo(t, b, "open Delete group", chromedp.Click(chromedp.CSS(card+` [data-testid=group-delete] summary`)))
	btDo(t, b, "type a wrong name", chromedp.SendKeys(chromedp.CSS(card+` [data-testid=group-delete-confirm]`), "cv-2025"))
	resp = btSubmit(t, b, "click Delete", chromedp.Click(chromedp.CSS(card+` [data-testid=group-delete-submit]`)))
	if resp.Status != http.StatusBadRequest {
		t.Fatalf("delete with the old name typed: %d, want 400", resp.Status)
	}
	if msg := btText(t, b, `[data-testid=group-delete-error]`); msg != "Type the group's name, 视觉 2026, to delete it." {
		t.Fatalf("refusal: %q", msg)
	}
	btScreenshot(t, b, "group-delete-refused-"+jsName(js)+".png")
	if _, err := st.GroupByID(ctx, g.ID); err != nil {
		t.Fatalf("the group went with a wrong confirmation: %v", err)
	}
	btDo(t, b, "type the name", chromedp.SendKeys(chromedp.CSS(card+` [data-testid=group-delete-confirm]`), "视觉 2026"))
	btSubmit(t, b, "click Delete", chromedp.Click(chromedp.CSS(card+` [data-testid=group-delete-submit]`)))
	if msg := btText(t, b, `[data-testid=flash]`); msg != "Group 视觉 2026 deleted; its members keep their accounts." {
		t.Fatalf("flash after delete: %q", msg)
	}
	if n := len(btTexts(t, b, `[data-testid=group-card]`)); n != 0 {
		t.Fatalf("%d group cards after deleting the only group", n)
	}
	if _, set, err := st.Quota(ctx, models.ScopeGroup, g.ID); err != nil || set {
		t.Fatalf("the deleted group's quota is still stored (%v %v)", set, err)
	}
	if u, err := st.UserByUsername(ctx, "kim"); err != nil || u.Disabled {
		t.Fatalf("the member after the delete: %+v %v", u, err)
	}
	if gs, _ := st.UserGroups(ctx, kim.ID); len(gs) != 0 {
		t.Fatalf("kim is still in %v", gs)
	}
	entries, _ := st.ListAudit(ctx, 20)
	var actions []string
	for _, e := range entries {
		if strings.HasPrefix(e.Action, "group.") {
			actions = append(actions, e.Action+" "+e.Target)
		}
	}
	if strings.Join(actions, ",") != "group.delete 视觉 2026,group.rename cv-2025" {
		t.Fatalf("audit rows %q", actions)
	}
}

// The groups API: what a script setting up a lab needs, with the page's
// rules and errors.
func TestAdminGroupsAPI(t *testing.T) {
	p := newPortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	tokenFor(t, p, "lee", "user")
	code, g := p.api("POST", "/api/v1/admin/groups", admin, `{"name":"nlp","description":"language"}`)
	if code != http.StatusCreated || g["name"] != "nlp" {
		t.Fatalf("create: %d %v", code, g)
	}
	id := itoa(int64(g["id"].(float64)))
	if code, out := p.api("POST", "/api/v1/admin/groups", admin, `{"name":"nlp"}`); code != 409 || errCode(out) != "conflict" {
		t.Errorf("a second nlp: %d %v, want 409 conflict", code, out)
	}
	member := "/api/v1/admin/groups/" + id + "/members/lee"
	for i := 0; i < 2; i++ { // the second add is a no-op
		if code, out := p.api("PUT", member, admin, ""); code != 200 || len(out["members"].([]any)) != 1 {
			t.Fatalf("add lee (%d): %d %v", i, code, out)
		}
	}
	if code, out := p.api("PUT", "/api/v1/admin/groups/"+id+"/members/nobody", admin, ""); code != 404 {
		t.Errorf("add a user who does not exist: %d %v", code, out)
	}
	if code, out := p.api("PUT", "/api/v1/admin/groups/"+id, admin, `{"name":"nlp-2026"}`); code != 200 || out["name"] != "nlp-2026" {
		t.Fatalf("rename: %d %v", code, out)
	}
	if code, out := p.api("PUT", "/api/v1/admin/groups/"+id, admin, `{"name":"a/b"}`); code != 400 || errCode(out) != "invalid_name" {
		t.Errorf("rename to a/b: %d %v", code, out)
	}
	if code, out := p.api("PUT", "/api/v1/admin/groups/"+id, admin, `{"description":"NLP, 2026 cohort"}`); code != 200 || out["description"] != "NLP, 2026 cohort" || out["name"] != "nlp-2026" {
		t.Fatalf("describe: %d %v", code, out)
	}
	if code, out := p.api("PUT", "/api/v1/admin/groups/"+id, admin, `{}`); code != 400 {
		t.Errorf("a PUT with nothing: %d %v", code, out)
	}
	// Names that look alike are one: full-width letters, doubled spaces.
	if code, out := p.api("POST", "/api/v1/admin/groups", admin, `{"name":"ｎｌｐ-2026"}`); code != 409 || errCode(out) != "conflict" {
		t.Errorf("a full-width twin of nlp-2026: %d %v", code, out)
	}
	if code, out := p.api("GET", "/api/v1/admin/groups", admin, ""); code != 200 || len(out["items"].([]any)) != 1 {
		t.Fatalf("list: %d %v", code, out)
	}
	if code, out := p.api("DELETE", member, admin, ""); code != 200 || len(out["members"].([]any)) != 0 {
		t.Fatalf("remove lee: %d %v", code, out)
	}
	if code, _ := p.api("DELETE", "/api/v1/admin/groups/"+id, admin, ""); code != http.StatusNoContent {
		t.Fatalf("delete: %d", code)
	}
	if code, _ := p.api("DELETE", "/api/v1/admin/groups/"+id, admin, ""); code != 404 {
		t.Fatalf("delete again: %d, want 404", code)
	}
	n := 0
	entries, _ := p.srv.Store.ListAudit(context.Background(), 50)
	for _, e := range entries {
		if strings.HasPrefix(e.Action, "group.") {
			n++
		}
	}
	if n != 6 { // create, add (once), rename, describe, remove, delete
		t.Fatalf("%d group audit rows, want 6", n)
	}
}
