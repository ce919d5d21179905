package web_test

import (
	"net/http"
	"testing"
)

// Admin API paths take a scope in the singular or the plural: quotas were
// /quotas/users/…, booking caps /reservation-caps/user/…, and the other
// spelling was answered "not found: it may have been deleted…". An unknown
// scope is a 400 that names the ones there are.
func TestAdminAPIScopeEitherSpelling(t *testing.T) {
	p := newPortal(t)
	tokenFor(t, p, "alice", "user")
	admin := tokenFor(t, p, "admin", "admin")
	for _, rq := range []struct{ path, body string }{
		{"/api/v1/admin/quotas/user/alice", `{"max_gpus": 2}`},
		{"/api/v1/admin/quotas/users/alice", `{"max_gpus": 3}`},
		{"/api/v1/admin/reservation-caps/users/alice", `{"unit_hours_per_week": 5}`},
		{"/api/v1/admin/reservation-caps/user/alice", `{"unit_hours_per_week": 6}`},
	} {
		if code, out := p.api("PUT", rq.path, admin, rq.body); code != http.StatusOK && code != http.StatusNoContent {
			t.Errorf("PUT %s: %d %v", rq.path, code, out)
		}
	}
	if code, out := p.api("GET", "/api/v1/admin/quotas/user/alice", admin, ""); code != http.StatusOK {
		t.Errorf("GET a quota by the singular scope: %d %v", code, out)
	}
	if code, out := p.api("PUT", "/api/v1/admin/quotas/colour/alice", admin, `{"max_gpus": 1}`); code != http.StatusBadRequest || errCode(out) != "invalid_scope" {
		t.Errorf("an unknown scope: %d %v; want 400 invalid_scope", code, out)
	}
}
