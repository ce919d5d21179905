package web_test

import (
	"context"
	"net/http"
	"testing"
)

// On the real engine: an administrator stops a user's running workbench
// through the API; it is stopped with the administrator named in its
// reason, audited, and its owner, who did not ask for it, is told.
func TestAdminForceStopTellsTheOwner(t *testing.T) {
	p, _ := enginePortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	alice := tokenFor(t, p, "alice", "user")
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"long","image":"fake","flavor":"1x H100 80GB HBM3"}`)
	if code != http.StatusAccepted {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, p, alice, id, "running")
	// An admin reads anyone's workbench by id (it is in ?all=true), and
	// nothing more of it: its logs stay its owner's, as its notebook does.
	if code, got := p.api("GET", "/api/v1/workbenches/"+id, admin, ""); code != 200 || got["owner"] != "alice" || got["state"] != "running" {
		t.Fatalf("admin reads alice's workbench: %d %v", code, got)
	}
	if code, _ := p.apiBytes("GET", "/api/v1/workbenches/"+id+"/logs", admin, ""); code != http.StatusNotFound {
		t.Fatalf("admin reads alice's logs: %d, want 404", code)
	}
	if code, _ := p.api("GET", "/api/v1/workbenches/"+id, tokenFor(t, p, "bob", "user"), ""); code != http.StatusNotFound {
		t.Fatalf("bob reads alice's workbench: %d, want 404", code)
	}
	if code, out := p.api("POST", "/api/v1/admin/workbenches/"+id+"/stop", alice, ""); code != http.StatusForbidden {
		t.Fatalf("a user used the admin stop: %d %v", code, out)
	}
	if code, out := p.api("POST", "/api/v1/admin/workbenches/"+id+"/stop", admin, ""); code != http.StatusNoContent {
		t.Fatalf("admin stop: %d %v", code, out)
	}
	got := waitState(t, p, alice, id, "stopped")
	if got["reason"] != "stopped by an administrator (admin)" {
		t.Fatalf("reason %v", got["reason"])
	}
	_, notes := p.api("GET", "/api/v1/notifications", alice, "")
	items, _ := notes["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["message"] != "Workbench long: stopped by an administrator (admin)" {
		t.Fatalf("alice's notifications: %v", notes)
	}
	// A second stop of the stopped workbench does nothing, and the audit
	// log does not claim it did.
	if code, out := p.api("POST", "/api/v1/admin/workbenches/"+id+"/stop", admin, ""); code != http.StatusNoContent {
		t.Fatalf("second admin stop: %d %v", code, out)
	}
	entries, err := p.srv.Store.ListAudit(context.Background(), 50)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if e.Action == "workbench.force_stop" && e.Target == id {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d workbench.force_stop audit rows for one stop and one no-op, want 1", n)
	}
}
