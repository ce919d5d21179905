package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"workbench/web"
)

// metricsGet fetches /metrics from base with an optional bearer token.
func metricsGet(t *testing.T, c *http.Client, base, bearer string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestAttackMetricsNeedAuthByDefault: the finding was that /metrics needed
// no login. With no metrics setting it is for admins only.
func TestAttackMetricsNeedAuthByDefault(t *testing.T) {
	p := newPortal(t)
	if code, _ := metricsGet(t, p.client(), p.ts.URL, ""); code != http.StatusUnauthorized {
		t.Fatalf("anonymous /metrics: %d, want 401", code)
	}
	user := tokenFor(t, p, "mallory", "user")
	if code, _ := metricsGet(t, http.DefaultClient, p.ts.URL, user); code != http.StatusForbidden {
		t.Fatalf("a user's token on /metrics: %d, want 403", code)
	}
	admin := tokenFor(t, p, "admin", "admin")
	if code, body := metricsGet(t, http.DefaultClient, p.ts.URL, admin); code != 200 || !strings.Contains(body, "workbench_gpus_simulated") {
		t.Fatalf("admin token on /metrics: %d", code)
	}
}

func TestMetricsBearerToken(t *testing.T) {
	const secret = "prometheus-scrape-secret-1"
	p := newPortal(t, func(c *web.Config) { c.MetricsToken = secret })
	for _, bad := range []string{"", "wrong-secret-wrong-secret", secret + "x"} {
		if code, _ := metricsGet(t, http.DefaultClient, p.ts.URL, bad); code != http.StatusUnauthorized {
			t.Fatalf("bearer %q: %d, want 401", bad, code)
		}
	}
	if code, body := metricsGet(t, http.DefaultClient, p.ts.URL, secret); code != 200 || !strings.Contains(body, "go_goroutines") {
		t.Fatalf("right token: %d", code)
	}
}

func TestMetricsSeparateAddress(t *testing.T) {
	p := newPortal(t, func(c *web.Config) { c.MetricsAddr = "127.0.0.1:0" })
	admin := tokenFor(t, p, "admin", "admin")
	if code, _ := metricsGet(t, http.DefaultClient, p.ts.URL, admin); code != http.StatusNotFound {
		t.Fatalf("/metrics on the portal's address with a metrics address set: %d, want 404", code)
	}
	ms := httptest.NewServer(p.srv.MetricsHandler())
	defer ms.Close()
	if code, body := metricsGet(t, http.DefaultClient, ms.URL, ""); code != 200 || !strings.Contains(body, "workbench_gpus") {
		t.Fatalf("/metrics on the metrics address: %d", code)
	}
}
