package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"workbench/models"
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
	// Three years of 512 GiB at that rate is beyond what an amount can
	// hold: a 400 for the request as a whole, with a code that says so
	// (it was "invalid__").
	big := &models.Flavor{Name: "big memory", CPUMilli: 1000, MemoryMiB: 512 * 1024, ShmMiB: 1024, Enabled: true}
	if err := p.srv.Store.CreateFlavor(context.Background(), big); err != nil {
		t.Fatal(err)
	}
	code, est = p.api("POST", "/api/v1/calculator/estimate", admin, `{"flavor":"big memory","duration":"total","total_hours":26280}`)
	if code != http.StatusBadRequest || errCode(est) != "invalid_request" || !strings.Contains(fmt.Sprint(est), "too large to compute") {
		t.Errorf("an estimate beyond int64: %d %v, want 400 invalid_request saying it is too large", code, est)
	}
}
