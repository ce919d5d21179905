package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestAPIBodyMistakesAreNamed: a JSON body with a misspelt field or the
// wrong kind of value is refused with a message that names the field and
// what it takes, in the words of the API, not encoding/json's Go types.
// The calculator refuses fields it does not read: "hours" (for
// total_hours) and the page's spelling "utilisation" were answered from
// the defaults (8 h × 22 days, 50 %) without a word.
func TestAPIBodyMistakesAreNamed(t *testing.T) {
	p := newPortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	for _, tc := range []struct {
		method, path, body string
		code, message      string
	}{
		{"POST", "/api/v1/calculator/estimate", `{"flavor":"CPU small","hours":1}`, "unknown_field", `this endpoint has no field "hours": check its spelling (it takes: flavor,`},
		{"POST", "/api/v1/calculator/tco", `{"gpu_model":"NVIDIA H100 80GB HBM3","utilisation":0.9}`, "unknown_field", `this endpoint has no field "utilisation": check its spelling`},
		{"POST", "/api/v1/admin/calculator/apply-rate", `{"gpu_model":"NVIDIA H100 80GB HBM3","target":0.9}`, "unknown_field", `this endpoint has no field "target"`},
		{"PUT", "/api/v1/admin/quotas/default", `{"max_gpus":1.5}`, "invalid_body", "the field max_gpus must be a whole number, not number 1.5"},
		{"PUT", "/api/v1/admin/quotas/default", `{"max_gpus":"2"}`, "invalid_body", "the field max_gpus must be a whole number, not a string"},
		{"PUT", "/api/v1/admin/prices", `[{"resource":"gpu"}]`, "invalid_body", "the request body must be a JSON object, not a list"},
		{"PUT", "/api/v1/admin/prices", `{"rates":[{"resource":"gpu",}]}`, "invalid_body", "the request body is not valid JSON (at byte"},
		// Two bodies pasted: the second was ignored.
		{"PUT", "/api/v1/admin/quotas/default", `{"max_gpus":2} {"max_gpus":0}`, "invalid_body", "the request body holds more than one JSON value: send one object"},
		{"PUT", "/api/v1/admin/quotas/default", `{"max_gpus":2} x`, "invalid_body", "the request body is not valid JSON"},
	} {
		status, out := p.api(tc.method, tc.path, admin, tc.body)
		msg := ""
		if e, ok := out["error"].(map[string]any); ok {
			msg, _ = e["message"].(string)
		}
		if status != http.StatusBadRequest || errCode(out) != tc.code || !strings.HasPrefix(msg, tc.message) || strings.Contains(msg, "Go ") {
			t.Errorf("%s %s %s: %d %s %q\nwant 400 %s %q…", tc.method, tc.path, tc.body, status, errCode(out), msg, tc.code, tc.message)
		}
	}
	// Nothing of a refused body was saved; a body with a trailing newline
	// (curl -d @file) is one object.
	if status, out := p.api("GET", "/api/v1/admin/quotas/default", admin, ""); status != 200 || out["quota"].(map[string]any)["max_gpus"] != nil {
		t.Errorf("after the refused bodies: %d %v, want max_gpus unchanged", status, out)
	}
	if status, out := p.api("PUT", "/api/v1/admin/quotas/default", admin, "{\"max_gpus\":3}\n"); status != 200 {
		t.Errorf("a body ending in a newline: %d %v", status, out)
	}
	// The names the calculator reads still work.
	if status, out := p.api("POST", "/api/v1/calculator/estimate", admin, `{"flavor":"CPU small","duration":"total","total_hours":1}`); status != 200 {
		t.Errorf("estimate with its own names: %d %v", status, out)
	}
	if status, out := p.api("POST", "/api/v1/calculator/tco", admin, `{"gpu_model":"NVIDIA H100 80GB HBM3","utilization":0.9,"use_measured":false}`); status != 200 {
		t.Errorf("TCO with its own names: %d %v", status, out)
	}
}

// TestSmallFlavorGetsAFittingShm: a flavor of 512 MiB created through the
// API without shm_mib gets half its memory as /dev/shm (it was refused:
// "shm_mib: must be between 0 and the flavor's memory", a field the
// request never sent); a larger one keeps 1 GiB, and a given value stands.
func TestSmallFlavorGetsAFittingShm(t *testing.T) {
	p := newPortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	for _, tc := range []struct {
		body string
		shm  float64
	}{
		{`{"name":"tiny","cpu_cores":0.5,"memory_gib":0.5}`, 256},
		{`{"name":"small","cpu_cores":1,"memory_gib":4}`, 1024},
		{`{"name":"given","cpu_cores":1,"memory_gib":4,"shm_mib":64}`, 64},
	} {
		code, out := p.api("POST", "/api/v1/flavors", admin, tc.body)
		if code != 201 || out["shm_mib"] != tc.shm {
			t.Errorf("%s: %d shm_mib %v, want 201 with %v", tc.body, code, out["shm_mib"], tc.shm)
		}
	}
}

// TestFlavorAPIRefusalNamesTheBodysField: the API sends seconds where the
// form asks hours and minutes; a bad value is refused under the body's
// field (it read invalid_max_runtime_hours, a field the body has not).
func TestFlavorAPIRefusalNamesTheBodysField(t *testing.T) {
	p := newPortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	for _, tc := range []struct{ body, code string }{
		{`{"name":"neg","cpu_cores":1,"memory_gib":4,"max_runtime_seconds":-5}`, "invalid_max_runtime_seconds"},
		{`{"name":"huge","cpu_cores":1,"memory_gib":4,"max_runtime_seconds":9223372036854775807}`, "invalid_max_runtime_seconds"},
		{`{"name":"idle","cpu_cores":1,"memory_gib":4,"gpu_idle_timeout_seconds":-1}`, "invalid_gpu_idle_timeout_seconds"},
		// Bodies that say two things: one was silently dropped before.
		{`{"name":"m11","gpu_model":"NVIDIA H100 80GB HBM3","cpu_cores":1,"memory_gib":1}`, "invalid_gpu_count"},
		{`{"name":"both","cpu_cores":1,"memory_gib":1,"memory_mib":2048}`, "invalid_memory_mib"},
		// A value its own type refuses names its field (it read "the
		// request body is not valid JSON for this endpoint").
		{`{"name":"tiny","cpu_cores":0.0001,"memory_gib":1}`, "invalid_cpu_cores"},
	} {
		code, out := p.api("POST", "/api/v1/flavors", admin, tc.body)
		if code != http.StatusBadRequest || errCode(out) != tc.code || strings.Contains(errMessage(out), "hours") || strings.Contains(errMessage(out), "minutes") {
			t.Errorf("%s: %d %v; want 400 %s in seconds", tc.body, code, out, tc.code)
		}
	}
}

// TestPriceAPIRefusalNamesTheEntry: of several rates in one body, a
// refusal names the entry and the body's own field ("rates[1]:
// rate_micros"), not the form's ("rate") with no entry.
func TestPriceAPIRefusalNamesTheEntry(t *testing.T) {
	p := newPortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	status, out := p.api("PUT", "/api/v1/admin/prices", admin, `{"rates":[{"resource":"cpu","rate_micros":5},{"resource":"memory","rate_micros":-1}]}`)
	msg := ""
	if e, ok := out["error"].(map[string]any); ok {
		msg, _ = e["message"].(string)
	}
	if status != http.StatusBadRequest || errCode(out) != "invalid_rate_micros" || !strings.HasPrefix(msg, "rate_micros: rates[1]: must be between 0 and 1,000,000 per unit") {
		t.Errorf("a negative second rate: %d %s %q", status, errCode(out), msg)
	}
	// A CPU rate "for H100 nodes" was stored as the CPU rate of every
	// workbench, the model dropped without a word.
	status, out = p.api("PUT", "/api/v1/admin/prices", admin, `{"rates":[{"resource":"cpu","gpu_model":"NVIDIA H100 80GB HBM3","rate_micros":1}]}`)
	if status != http.StatusBadRequest || errCode(out) != "invalid_gpu_model" {
		t.Errorf("a CPU rate with a GPU model: %d %v", status, out)
	}
	if rates, err := p.srv.Store.PriceHistory(context.Background()); err != nil || rates[0].Micros == 1 {
		t.Errorf("the newest rate after the refusal: %+v %v", rates[0], err)
	}
}

// TestChineseWorkbenchNameIsNamedAsTheProblem: a workbench name in Chinese
// is refused with a message that says only Latin letters are taken (it
// said "letters", which Chinese characters are to their reader).
func TestChineseWorkbenchNameIsNamedAsTheProblem(t *testing.T) {
	p := newPortal(t)
	alice := tokenFor(t, p, "alice", "user")
	status, out := p.api("POST", "/api/v1/workbenches", alice, `{"name":"数据分析-实验一","image":"PyTorch (CUDA 12)","flavor":"CPU small"}`)
	msg := ""
	if e, ok := out["error"].(map[string]any); ok {
		msg, _ = e["message"].(string)
	}
	if status != http.StatusBadRequest || !strings.Contains(msg, "Latin letters (a–z, A–Z)") {
		t.Errorf("a Chinese name by the API: %d %q", status, msg)
	}
	zh, _ := p.readersSignedIn("alice", "alice-password")
	res, body := p.postFormBody(zh, "/workbenches", url.Values{"name": {"数据分析-实验一"}, "image": {"PyTorch (CUDA 12)"}, "flavor": {"CPU small"}})
	if got := strings.TrimSpace(mpDoc(t, body).Find(`[data-testid=error-name]`).Text()); res.StatusCode != http.StatusBadRequest || !strings.Contains(got, "拉丁字母") || !strings.Contains(got, "暂不支持中文名称") {
		t.Errorf("a Chinese name on the Chinese form: %d %q", res.StatusCode, got)
	}
}

// TestLaunchTakesIdsAsNumbers: a launch's image and flavor may be ids as
// GET /images and /flavors give them, numbers (SPEC §8: "a name or an
// id"); they had to be strings. A value that is neither is named.
func TestLaunchTakesIdsAsNumbers(t *testing.T) {
	p := newPortal(t)
	alice := tokenFor(t, p, "alice", "user")
	ctx := context.Background()
	img, err := p.srv.Store.ImageByNameOrID(ctx, "PyTorch (CUDA 12)")
	if err != nil {
		t.Fatal(err)
	}
	fl, err := p.srv.Store.FlavorByNameOrID(ctx, "CPU small")
	if err != nil {
		t.Fatal(err)
	}
	// Accepted with the image and flavor the ids name (its pull then fails
	// in the background here: no registry; that is not this test's).
	status, out := p.api("POST", "/api/v1/workbenches", alice, fmt.Sprintf(`{"name":"byid","image":%d,"flavor":%d}`, img.ID, fl.ID))
	if status != http.StatusAccepted || out["image"] != img.Name || out["flavor"] != fl.Name {
		t.Errorf("ids as numbers: %d, launched %v / %v, want 202 with %s / %s", status, out["image"], out["flavor"], img.Name, fl.Name)
	}
	status, out = p.api("POST", "/api/v1/workbenches", alice, `{"name":"bad","image":true,"flavor":"CPU small"}`)
	msg := ""
	if e, ok := out["error"].(map[string]any); ok {
		msg, _ = e["message"].(string)
	}
	if status != http.StatusBadRequest || msg != "the field image must be a name or a positive whole id, not true or false" {
		t.Errorf("image true: %d %q", status, msg)
	}
}

// TestTokenCreateIsAudited: an API token made through the API or the
// settings page leaves a token.create row with its name and prefix, never
// its secret (only the revocation was recorded).
func TestTokenCreateIsAudited(t *testing.T) {
	p := newPortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	status, out := p.api("POST", "/api/v1/tokens", admin, `{"name":"ci","expires_days":7}`)
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, out)
	}
	secret, _ := out["token"].(string)
	c := p.client()
	p.loginSudo(c, "admin", adminPassword)
	if res := p.postForm(c, "/settings/tokens", url.Values{"name": {"laptop"}, "expires_days": {"30"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("form create: %d", res.StatusCode)
	}
	audit, err := p.srv.Store.ListAudit(context.Background(), 20)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, a := range audit {
		if a.Action != "token.create" {
			continue
		}
		if strings.Contains(a.After, secret) {
			t.Error("the audit row holds the secret")
		}
		for _, n := range []string{"ci", "laptop"} {
			if strings.Contains(a.After, `"name":"`+n+`"`) && strings.Contains(a.After, `"prefix"`) {
				names[n] = true
			}
		}
	}
	if !names["ci"] || !names["laptop"] {
		t.Errorf("token.create rows for %v, want ci (API) and laptop (page)", names)
	}
}

// A time that is not RFC 3339 is refused in those words, without Go's
// reference layout ("2006-01-02T15:04:05Z07:00") that the parser's text
// carries.
func TestBadTimeInABodyIsNamed(t *testing.T) {
	p := newPortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	status, out := p.api("PUT", "/api/v1/admin/prices", admin, `{"rates":[{"resource":"cpu","rate_micros":5,"effective_from":"2030-01-01"}]}`)
	msg := ""
	if e, ok := out["error"].(map[string]any); ok {
		msg, _ = e["message"].(string)
	}
	if status != http.StatusBadRequest || errCode(out) != "invalid_body" || !strings.Contains(msg, "not an RFC 3339 time: write it as 2030-01-01T00:00:00Z") || strings.Contains(msg, "2006") {
		t.Errorf("a date for effective_from: %d %s %q", status, errCode(out), msg)
	}
}

// TestCSVUnknownParameterCode: the CSV exports a script fetches with a
// token answer a parameter they do not take with the API's code for it,
// unknown_parameter, as every /api/v1 endpoint does (they answered
// invalid_from, invalid_x: a code per parameter name).
func TestCSVUnknownParameterCode(t *testing.T) {
	p := newPortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	for _, path := range []string{"/usage.csv?from=2026-11-01", "/admin/billing.csv?x=1", "/usage-summary.csv?montth=2026-11"} {
		code, out := p.api("GET", path, admin, "")
		if code != http.StatusBadRequest || errCode(out) != "unknown_parameter" {
			t.Errorf("GET %s: %d %v, want 400 unknown_parameter", path, code, out)
		}
	}
	// A parameter given twice still names itself.
	if code, out := p.api("GET", "/usage.csv?month=2026-11&month=2026-10", admin, ""); code != http.StatusBadRequest || errCode(out) != "invalid_month" {
		t.Errorf("month twice: %d %v", code, out)
	}
}

// GET /admin/prices lists the rates in force in one order, call after
// call (they came out of a map in a new order each time).
func TestPricesCurrentInAFixedOrder(t *testing.T) {
	p := newPortal(t)
	admin := tokenFor(t, p, "admin", "admin")
	order := func() string {
		_, out := p.api("GET", "/api/v1/admin/prices", admin, "")
		var ids []string
		for _, r := range out["current"].([]any) {
			ids = append(ids, fmt.Sprint(r.(map[string]any)["id"]))
		}
		return strings.Join(ids, ",")
	}
	first := order()
	if strings.Count(first, ",") < 3 {
		t.Fatalf("current rates %q: want the seeded ones", first)
	}
	for i := 0; i < 10; i++ {
		if got := order(); got != first {
			t.Fatalf("call %d listed %s, the first %s", i+2, got, first)
		}
	}
}
