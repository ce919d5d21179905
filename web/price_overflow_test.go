package web_test

import (
	"net/http"
	"testing"
)

// TestHighestRateKeepsThePortalUp: the highest memory rate the price list
// takes (a million per GiB-hour, what typing "5000" into a per-unit box
// comes near) leaves the launch form and the calculator working. The
// launch form answered 500 ("pricing: overflow") to every user, and the
// billing pass crashed the portal.
func TestHighestRateKeepsThePortalUp(t *testing.T) {
	p := newPortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	if code, out := p.api("PUT", "/api/v1/admin/prices", admin, `{"rates":[{"resource":"memory","rate_micros":1000000000000}]}`); code != 200 {
		t.Fatalf("set the highest memory rate: %d %v", code, out)
	}
	c := p.client()
	p.login(c, "admin", adminPassword)
	if res, body := p.get(c, "/workbenches/new"); res.StatusCode != 200 {
		t.Fatalf("launch form: %d %.300s", res.StatusCode, body)
	}
	code, est := p.api("POST", "/api/v1/calculator/estimate", admin, `{"flavor":"CPU small","duration":"total","total_hours":730}`)
	if code != http.StatusOK {
		t.Fatalf("estimate a month at the highest rate: %d %v", code, est)
	}
}
