package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// An exchange rate the other way round is refused on the page as in the
// API, against the rate the portal ships: typed on the page it was saved
// (every offer in that currency 50 times cheaper), and the API then
// refused the right value because it compared with the wrong one in force.
// The audit row of a change records the values it set (it recorded those
// before it).
func TestExchangeRateGuardAndAudit(t *testing.T) {
	p := calcPortal(t) // a USD portal: CNY is about 0.14 USD
	ctx := context.Background()
	adminTok := tokenFor(t, p, "admin", "admin")
	admin := p.client()
	p.loginSudo(admin, "admin", adminPassword)
	res, body := p.postFormBody(admin, "/admin/cloud-prices/settings", url.Values{"fx_CNY": {"7.1"}})
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "is over 20 times off the usual rate") {
		t.Errorf("CNY at 7.1 USD on the page: %d, want 400 asking whether it is the other way round", res.StatusCode)
	}
	if cs, _ := p.srv.Store.CalculatorSettings(ctx); cs.FXMicros["CNY"] != 0 {
		t.Fatalf("the page stored %d", cs.FXMicros["CNY"])
	}
	// A wrong rate already in force (set before this guard) does not block
	// the right one.
	if err := p.srv.Store.SetExchangeRate(ctx, "CNY", 7_100_000, "", ""); err != nil {
		t.Fatal(err)
	}
	if code, out := p.api("PUT", "/api/v1/admin/calculator/settings", adminTok, `{"exchange_rates_micros":{"CNY":139000}}`); code != 200 {
		t.Fatalf("the right rate over a wrong one: %d %v", code, out)
	}
	audit, err := p.srv.Store.ListAudit(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, a := range audit {
		if a.Action == "calculator.settings" {
			found = true
			if !strings.Contains(a.After, `"CNY":139000`) || !strings.Contains(a.Before, `"CNY":7100000`) {
				t.Errorf("audit before %s, after %s: want 7100000 then 139000", a.Before, a.After)
			}
			break
		}
	}
	if !found {
		t.Error("no calculator.settings audit row")
	}
}
