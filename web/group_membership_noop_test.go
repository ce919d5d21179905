package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// Adding a member who is already in a group, or removing one who is not,
// says so and writes no audit row: "stud29 removed from nlp." was flashed
// and audited for a user never in it. A real change is audited under the
// group's name (it read "group.remove_member 2").
func TestGroupMembershipNoOpsSaySoAndAreNotAudited(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	c := p.client()
	p.loginSudo(c, "admin", adminPassword)
	tokenFor(t, p, "lin", "user")
	g, err := p.srv.Store.CreateGroup(ctx, "nlp", "")
	if err != nil {
		t.Fatal(err)
	}
	members := "/admin/groups/" + strconv.FormatInt(g.ID, 10) + "/members"
	audits := func() int {
		entries, _, err := p.srv.Store.AuditPage(ctx, "", "", 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range entries {
			if strings.HasPrefix(e.Action, "group.") {
				n++
			}
		}
		return n
	}
	flash := func() string {
		_, body := p.get(c, "/admin/groups")
		return body
	}
	if res := p.postForm(c, members+"/remove", url.Values{"username": {"lin"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("remove a non-member: %d", res.StatusCode)
	}
	if body := flash(); !strings.Contains(body, "lin is not in nlp: nothing to remove.") {
		t.Error("removing a non-member does not say so")
	}
	if n := audits(); n != 0 {
		t.Errorf("%d group audit rows after removing a non-member, want 0", n)
	}
	p.postForm(c, members, url.Values{"username": {"lin"}})
	p.postForm(c, members, url.Values{"username": {"lin"}})
	if body := flash(); !strings.Contains(body, "lin is already in nlp.") {
		t.Error("adding a member twice does not say so")
	}
	entries, _, _ := p.srv.Store.AuditPage(ctx, "group.add_member", "", 0, 10)
	if len(entries) != 1 || entries[0].Target != "nlp" {
		t.Errorf("add-member audit rows %+v, want one with target nlp", entries)
	}
}
