package web_test

import (
	"testing"

	"workbench/web"
)

// Quotas bound the idle timeout a user may pick: the most generous of the
// user's groups applies (lowest minimum, highest maximum) unless the user
// has an override.
func TestQuotaIdleTimeoutBounds(t *testing.T) {
	p, _ := enginePortal(t, func(c *web.Config) { c.Workbenches.MinIdle = 60e9 }) // portal-wide: ≥ 1 min
	admin := tokenFor(t, p, "admin", "admin")
	alice := tokenFor(t, p, "alice", "user")
	if code, body := p.api("PUT", "/api/v1/admin/quotas/users/alice", admin, `{"min_idle_minutes":30,"max_idle_minutes":120}`); code != 200 {
		t.Fatalf("set quota: %d %v", code, body)
	}
	if code, body := p.api("PUT", "/api/v1/admin/quotas/users/alice", admin, `{"min_idle_minutes":90,"max_idle_minutes":60}`); code != 400 || errCode(body) != "invalid_min_idle_minutes" {
		t.Fatalf("min above max: %d %v", code, body)
	}
	for _, c := range []struct {
		idle string
		want int
	}{{"600", 422}, {"9000", 422}, {"3600", 202}} {
		code, body := p.api("POST", "/api/v1/workbenches", alice, `{"name":"idle`+c.idle+`","image":"fake","flavor":"CPU small","idle_timeout_seconds":`+c.idle+`}`)
		if code != c.want {
			t.Errorf("idle %s s: %d %v, want %d", c.idle, code, body, c.want)
		}
		if code == 422 && errCode(body) != "quota_exceeded" {
			t.Errorf("idle %s s: code %q", c.idle, errCode(body))
		}
	}
	p.srv.Manager.Wait()
}

// The launch form offers the idle timeout the user's quota allows: its
// default of 60 minutes was refused to a user whose quota asks 90 to 120
// ("your quota needs an idle timeout of at least 90 minutes").
func TestLaunchFormIdleFollowsTheQuota(t *testing.T) {
	p := newPortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	tokenFor(t, p, "alice", "user")
	if code, body := p.api("PUT", "/api/v1/admin/quotas/users/alice", admin, `{"min_idle_minutes":90,"max_idle_minutes":120}`); code != 200 {
		t.Fatalf("set quota: %d %v", code, body)
	}
	c := p.client()
	p.login(c, "alice", "alice-password")
	_, body := p.get(c, "/workbenches/new")
	in := parseHTML(t, body).Find(`input[name=idle_minutes]`)
	if v, _ := in.Attr("value"); v != "90" {
		t.Errorf("idle default %q, want 90 (the quota's minimum)", v)
	}
	if lo, _ := in.Attr("min"); lo != "90" {
		t.Errorf("idle min %q, want 90", lo)
	}
	if hi, _ := in.Attr("max"); hi != "120" {
		t.Errorf("idle max %q, want 120", hi)
	}
}
