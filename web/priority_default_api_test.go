package web_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// Default priority classes through the API: admins only, audited, bad
// input refused with a code, and a queued launch without a class takes its
// group's default.
func TestPriorityDefaultsAPI(t *testing.T) {
	p, _ := enginePortal(t)
	ctx := context.Background()
	admin := tokenFor(t, p, "admin", "admin")
	alice := tokenFor(t, p, "alice", "user")
	_, gpus := p.api("GET", "/api/v1/gpus", admin, "")
	for _, it := range gpus["items"].([]any) {
		uuid := it.(map[string]any)["uuid"].(string)
		if code, out := p.api("PUT", "/api/v1/gpus/"+uuid+"/drain", admin, `{"drained":true}`); code != 200 {
			t.Fatalf("drain: %d %v", code, out)
		}
	}
	g, err := p.srv.Store.CreateGroup(ctx, "research", "")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := p.srv.Store.UserByUsername(ctx, "alice")
	if err := p.srv.Store.AddGroupMember(ctx, g.ID, u.ID); err != nil {
		t.Fatal(err)
	}
	path := "/api/v1/admin/priority-defaults/group/" + strconv.FormatInt(g.ID, 10)
	if code, _ := p.api("PUT", path, alice, `{"class":"batch"}`); code != http.StatusForbidden {
		t.Fatalf("user PUT default: %d", code)
	}
	if code, out := p.api("PUT", path, admin, `{"class":"nope"}`); code != http.StatusBadRequest || errCode(out) != "invalid_class" {
		t.Fatalf("unknown class: %d %v", code, out)
	}
	if code, out := p.api("PUT", "/api/v1/admin/priority-defaults/user/1", admin, `{"class":"batch"}`); code != http.StatusBadRequest || errCode(out) != "invalid_scope" {
		t.Fatalf("unknown scope: %d %v", code, out)
	}
	code, put := p.api("PUT", path, admin, `{"class":"batch"}`)
	if code != 200 || put["class"] != "batch" {
		t.Fatalf("admin PUT default: %d %v", code, put)
	}
	code, list := p.api("GET", "/api/v1/admin/priority-defaults", admin, "")
	if code != 200 || len(list["items"].([]any)) != 1 {
		t.Fatalf("list: %d %v", code, list)
	}
	// The PUT answers the default as saved: its time is the one the list
	// shows, not the zero time (it answered year 1).
	if stored := list["items"].([]any)[0].(map[string]any)["updated_at"]; put["updated_at"] != stored || strings.HasPrefix(stored.(string), "0001") {
		t.Fatalf("PUT updated_at %v, list %v", put["updated_at"], stored)
	}
	entries, _, err := p.srv.Store.AuditPage(ctx, "priority_default.save", "", 0, 10)
	if err != nil || len(entries) != 1 || entries[0].Target != "group:"+strconv.FormatInt(g.ID, 10) {
		t.Fatalf("audit %+v (%v)", entries, err)
	}
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"later","image":"fake","flavor":"1x H100 80GB HBM3","queue":true}`)
	if code != http.StatusAccepted || wb["priority"] != "batch" {
		t.Fatalf("launch without a class: %d %v", code, wb)
	}
	if code, out := p.api("POST", "/api/v1/workbenches", alice, `{"name":"above","image":"fake","flavor":"1x H100 80GB HBM3","queue":true,"priority":"interactive"}`); code != http.StatusBadRequest || errCode(out) != "invalid_priority" {
		t.Fatalf("above the group's default: %d %v", code, out)
	}
}
