package web_test

import (
	"context"
	"net/http"
	"testing"

	"workbench/models"
)

// The admin API's stop answers as the owner's does: 200 with the
// workbench (it was 204 with no body, so a script had to read the
// workbench again to learn its state). A second stop of the stopped
// workbench answers it too, unchanged.
func TestAdminStopAPIAnswersTheWorkbench(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	admin := tokenFor(t, p, "admin", "admin")
	tokenFor(t, p, "alice", "user")
	alice, _ := p.srv.Store.UserByUsername(ctx, "alice")
	wb := p.runningRecord(alice, "long", models.GPUNeed{})
	for _, round := range []string{"stop", "second stop"} {
		code, got := p.api("POST", "/api/v1/admin/workbenches/"+wb.ID+"/stop", admin, "")
		if code != http.StatusOK || got["id"] != wb.ID || got["state"] != models.StateStopped || got["owner"] != "alice" || got["name"] != "long" {
			t.Fatalf("admin %s: %d %v; want 200 with alice's stopped workbench", round, code, got)
		}
		if _, ok := got["admin_views"]; ok {
			t.Errorf("admin %s: the answer carries the owner's admin_views: %v", round, got)
		}
	}
}
