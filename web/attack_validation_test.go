package web_test

// The attack suite, input part: every piece of nonsense the attack got
// accepted, sent again. Each must be refused with the right status (400
// naming the field, 413, 405 with Allow) and must change nothing.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"workbench/models"
)

// portalState is everything the cases below could have changed.
func portalState(t *testing.T, p *testPortal) string {
	t.Helper()
	ctx := context.Background()
	st := p.srv.Store
	prices, err := st.PriceHistory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	images, _ := st.ListImages(ctx, false)
	flavors, _ := st.ListFlavors(ctx, false)
	cloud, _ := st.ListCloudPrices(ctx)
	quota, _, _ := st.Quota(ctx, models.ScopeDefault, 0)
	users, _ := st.ListUsers(ctx)
	hashes := map[string]string{}
	for _, u := range users {
		hashes[u.Username] = u.PasswordHash
	}
	audit, _ := st.ListAudit(ctx, 1000)
	b, _ := json.Marshal(map[string]any{"prices": prices, "images": images, "flavors": flavors, "cloud": cloud,
		"quota": quota, "users": users, "hashes": hashes, "audit": len(audit)})
	return string(b)
}

// rawRequest sends one request, as a session (cookie client) or with a
// bearer token, and returns the status, the Allow header and the body.
func (p *testPortal) rawRequest(c *http.Client, method, path, token, contentType, body string) (int, http.Header, string) {
	p.t.Helper()
	req, _ := http.NewRequest(method, p.ts.URL+path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Origin", p.ts.URL)
	req.Header.Set("Referer", p.ts.URL+"/")      // a portal page's form
	req.Header.Set("Sec-Fetch-Mode", "navigate") // as a browser on https or localhost sends
	req.Header.Set("Sec-Fetch-Dest", "document")
	req.Header.Set("Sec-Fetch-User", "?1")
	res, err := c.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

func TestAttackValidationTable(t *testing.T) {
	p := newPortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	session := p.client()
	p.loginSudo(session, "admin", adminPassword)
	const h100 = "NVIDIA H100 80GB HBM3"
	goodImage := func(field, value string) string {
		m := map[string]string{"name": "Evil image", "image": "registry.example.org/ml/evil:1",
			"start_command": "jupyter lab --port={port} --ServerApp.base_url={base_url} --IdentityProvider.token={token}", "home_path": "/home/jovyan"}
		m[field] = value
		b, _ := json.Marshal(m)
		return string(b)
	}
	cloud := func(extra string) string {
		return `{"provider":"Evil","offer":"e1","gpu_model":"` + h100 + `","tier":"on-demand","currency":"USD","price_per_gpu_hour":"2.5","source":"test"` + extra + `}`
	}
	big := strings.Repeat("x", 2<<20)
	const json_ = "application/json"
	const form = "application/x-www-form-urlencoded"

	cases := []struct {
		name        string
		session     bool // as the logged-in admin's browser, else the admin's API token
		method      string
		path        string
		contentType string
		body        string
		status      int
		code        string // error code in a JSON answer ("" for pages)
		allow       string // the Allow header of a 405
	}{
		{"quota allowed_images of an unknown image", false, "PUT", "/api/v1/admin/quotas/default", json_, `{"allowed_images":["nope"]}`, 400, "invalid_allowed_images", ""},
		{"quota allowed_flavors of an unknown flavor", false, "PUT", "/api/v1/admin/quotas/default", json_, `{"allowed_flavors":["nope"]}`, 400, "invalid_allowed_flavors", ""},
		{"quota max_idle_minutes 0 blocks every launch", false, "PUT", "/api/v1/admin/quotas/default", json_, `{"max_idle_minutes":0}`, 400, "invalid_max_idle_minutes", ""},
		{"quota max_runtime_hours 0 read as none and as the strictest", false, "PUT", "/api/v1/admin/quotas/default", json_, `{"max_runtime_hours":0}`, 400, "invalid_max_runtime_hours", ""},
		{"quota min_idle_minutes above the portal's longest idle timeout", false, "PUT", "/api/v1/admin/quotas/default", json_, `{"min_idle_minutes":100000}`, 400, "invalid_min_idle_minutes", ""},
		{"quota max_idle_minutes below the portal's shortest idle timeout", false, "PUT", "/api/v1/admin/quotas/default", json_, `{"max_idle_minutes":1}`, 400, "invalid_max_idle_minutes", ""},
		{"quota per-model limit of an unknown model", false, "PUT", "/api/v1/admin/quotas/default", json_, `{"max_gpus_per_model":{"NVIDIA Z9000":1}}`, 400, "invalid_max_gpus_per_model", ""},
		{"empty apply-rate (API) changed the live H100 price", false, "POST", "/api/v1/admin/calculator/apply-rate", json_, `{}`, 400, "invalid_gpu_model", ""},
		{"empty apply-rate (form) changed the live H100 price", true, "POST", "/admin/calculator/apply-rate", form, ``, 400, "", ""},
		{"image home_path /proc", false, "POST", "/api/v1/images", json_, goodImage("home_path", "/proc"), 400, "invalid_home_path", ""},
		{"image home_path under /etc", false, "POST", "/api/v1/images", json_, goodImage("home_path", "/etc/jovyan"), 400, "invalid_home_path", ""},
		{"image home_path /usr/local/x", false, "POST", "/api/v1/images", json_, goodImage("home_path", "/usr/local/x"), 400, "invalid_home_path", ""},
		{"image home_path relative", false, "POST", "/api/v1/images", json_, goodImage("home_path", "home/x"), 400, "invalid_home_path", ""},
		{"start command glues ; to {token}", false, "POST", "/api/v1/images", json_, goodImage("start_command", "jupyter lab --port={port} --base={base_url} --token={token};"), 400, "invalid_start_command", ""},
		{"start command glues text before {port}", false, "POST", "/api/v1/images", json_, goodImage("start_command", "jupyter lab --port=8{port} --base={base_url} --token={token}"), 400, "invalid_start_command", ""},
		{"usage.csv?from=x", true, "GET", "/usage.csv?from=x", "", "", 400, "", ""},
		{"password of ten spaces", false, "POST", "/api/v1/admin/users", json_, `{"username":"eve","role":"user","password":"          "}`, 400, "invalid_password", ""},
		{"price effective 9999-12-31", false, "PUT", "/api/v1/admin/prices", json_, `{"rates":[{"resource":"gpu","gpu_model":"` + h100 + `","rate_micros":1000000,"effective_from":"9999-12-31T00:00:00Z"}]}`, 400, "invalid_effective_from", ""},
		{"price of a GPU model that does not exist", false, "PUT", "/api/v1/admin/prices", json_, `{"rates":[{"resource":"gpu","gpu_model":"NVIDIA Z9000","rate_micros":1000000}]}`, 400, "invalid_gpu_model", ""},
		{"good rate then a bad one: the good one is not added either", false, "PUT", "/api/v1/admin/prices", json_, `{"rates":[{"resource":"cpu","rate_micros":5},{"resource":"gpu","gpu_model":"NVIDIA Z9000","rate_micros":1}]}`, 400, "invalid_gpu_model", ""},
		{"cloud price gpus_in_offer 0 stored as 1", false, "POST", "/api/v1/admin/cloud-prices", json_, cloud(`,"gpus_in_offer":0`), 400, "invalid_gpus_in_offer", ""},
		{"cloud price as_of in 2999", false, "POST", "/api/v1/admin/cloud-prices", json_, cloud(`,"as_of":"2999-01-01"`), 400, "invalid_as_of", ""},
		{"cloud price as_of a future year", false, "POST", "/api/v1/admin/cloud-prices", json_, cloud(`,"as_of":"2999"`), 400, "invalid_as_of", ""},
		{"oversized JSON body", false, "PUT", "/api/v1/admin/quotas/default", json_, `{"allowed_images":["` + big + `"]}`, 413, "body_too_large", ""},
		{"oversized form body", true, "POST", "/admin/users", form, "username=eve&password=" + big, 413, "", ""},
		{"wrong method on the API", false, "DELETE", "/api/v1/me", "", "", 405, "method_not_allowed", "GET"},
		{"wrong method on a page", true, "GET", "/logout", "", "", 405, "", "POST"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := portalState(t, p)
			c, tok := http.DefaultClient, admin
			if tc.session {
				c, tok = session, ""
			}
			status, hdr, body := p.rawRequest(c, tc.method, tc.path, tok, tc.contentType, tc.body)
			if status != tc.status {
				t.Fatalf("%s %s: status %d, want %d: %.300s", tc.method, tc.path, status, tc.status, body)
			}
			if tc.code != "" {
				var out map[string]any
				if err := json.Unmarshal([]byte(body), &out); err != nil || errCode(out) != tc.code {
					t.Fatalf("error code %q, want %q: %.300s", errCode(out), tc.code, body)
				}
			}
			if tc.allow != "" && !strings.Contains(hdr.Get("Allow"), tc.allow) {
				t.Fatalf("Allow %q, want it to list %s", hdr.Get("Allow"), tc.allow)
			}
			if after := portalState(t, p); after != before {
				t.Fatalf("the refused request changed the portal:\nbefore %s\nafter  %s", before, after)
			}
		})
	}

	// The same endpoints still take good input (the table is not refusing everything).
	for _, ok := range []struct{ method, path, body string }{
		{"PUT", "/api/v1/admin/quotas/default", `{"max_idle_minutes":60}`},
		{"PUT", "/api/v1/admin/prices", `{"rates":[{"resource":"gpu","gpu_model":"` + h100 + `","rate_micros":2000000}]}`},
		{"POST", "/api/v1/images", goodImage("home_path", "/home/jovyan")},
		{"POST", "/api/v1/admin/cloud-prices", cloud(`,"as_of":"2024-Q3"`)},
	} {
		if status, _, body := p.rawRequest(http.DefaultClient, ok.method, ok.path, admin, json_, ok.body); status >= 300 {
			t.Errorf("good input refused: %s %s: %d %.300s", ok.method, ok.path, status, body)
		}
	}
	// A form over the limit sent without a length (chunked) is a 413 too.
	before := portalState(t, p)
	req, _ := http.NewRequest("POST", p.ts.URL+"/admin/users", io.MultiReader(strings.NewReader("username=eve&password="), strings.NewReader(big)))
	req.Header.Set("Content-Type", form)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Origin", p.ts.URL)
	req.Header.Set("Referer", p.ts.URL+"/")      // a portal page's form
	req.Header.Set("Sec-Fetch-Mode", "navigate") // as a browser on https or localhost sends
	req.Header.Set("Sec-Fetch-Dest", "document")
	req.Header.Set("Sec-Fetch-User", "?1")
	res, err := session.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge || req.ContentLength != 0 {
		t.Errorf("chunked oversized form: %d (content length %d), want 413", res.StatusCode, req.ContentLength)
	}
	if portalState(t, p) != before {
		t.Error("the chunked oversized form changed the portal")
	}
	if res := p.postForm(session, "/usage.csv", url.Values{}); res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /usage.csv: %d, want 405", res.StatusCode)
	}
}
