package web_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"workbench/models"
)

// An instructor sets up a class with one call per student: the account
// and its groups at once, each membership audited as the groups page's
// add is. A group that does not exist (a typo) refuses the whole call with
// unknown_group and creates nothing: no account, no membership, no audit
// row.
func TestAPIUserCreateWithGroups(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	st := p.srv.Store
	for _, name := range []string{"ml101", "gpu-lab"} {
		if _, err := st.CreateGroup(ctx, name, ""); err != nil {
			t.Fatal(err)
		}
	}
	admin := tokenFor(t, p, "admin", "admin")

	code, body := p.api("POST", "/api/v1/admin/users", admin, `{"username":"stud01","password":"stud01-password","groups":["ml101","gpu-lab","ml101"]}`)
	if code != 201 || body["username"] != "stud01" {
		t.Fatalf("create with groups: %d %v", code, body)
	}
	for _, name := range []string{"ml101", "gpu-lab"} {
		g, err := st.GroupByName(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(g.Members, []string{"stud01"}) {
			t.Errorf("%s members %v, want [stud01]", name, g.Members)
		}
	}

	code, body = p.api("POST", "/api/v1/admin/users", admin, `{"username":"stud02","password":"stud02-password","groups":["ml101","ml1O1"]}`)
	if code != 400 || errCode(body) != "unknown_group" || !strings.Contains(body["error"].(map[string]any)["message"].(string), `"ml1O1"`) {
		t.Fatalf("an unknown group: %d %v, want 400 unknown_group naming it", code, body)
	}
	if _, err := st.UserByUsername(ctx, "stud02"); !errors.Is(err, models.ErrNotFound) {
		t.Errorf("the refused call created stud02 (err %v)", err)
	}
	if g, _ := st.GroupByName(ctx, "ml101"); !slices.Equal(g.Members, []string{"stud01"}) {
		t.Errorf("ml101 after the refused call: %v", g.Members)
	}

	entries, err := st.ListAudit(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if e.Actor == "admin" && (e.Action == "user.create" || e.Action == "group.add_member") {
			got = append(got, e.Action+" "+e.Target+" "+e.After)
		}
	}
	slices.Reverse(got) // oldest first
	if len(got) != 3 || !strings.HasPrefix(got[0], "user.create stud01 ") ||
		got[1] != `group.add_member ml101 {"username":"stud01"}` || got[2] != `group.add_member gpu-lab {"username":"stud01"}` {
		t.Errorf("audit rows %q, want user.create stud01 then group.add_member ml101 and gpu-lab", got)
	}
}
