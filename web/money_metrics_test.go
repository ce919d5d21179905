package web_test

import (
	"strings"
	"testing"
)

// Billing, enforcement and metering errors are counted in /metrics, every
// kind present from the start so an alert can watch it.
func TestMetricsCountMoneyErrors(t *testing.T) {
	p := newPortal(t)
	admin := p.client()
	p.login(admin, "admin", adminPassword) // /metrics is for admins by default
	res, body := p.get(admin, "/metrics")
	if res.StatusCode != 200 {
		t.Fatalf("/metrics: %d", res.StatusCode)
	}
	for _, kind := range []string{"billing", "enforcement", "open_interval"} {
		if want := `workbench_money_errors_total{kind="` + kind + `"} 0`; !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
