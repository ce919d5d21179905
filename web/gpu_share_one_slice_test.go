package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Sharing a GPU "in 1 slice" is refused, on the form and the API alike, and
// the GPU stays whole: one slice would be the whole GPU handed out as a
// slice. 2 is the least that shares, and the page says "2 slices".
func TestShareInOneSliceIsRefused(t *testing.T) {
	p := newPortal(t)
	ac := p.client()
	p.loginSudo(ac, "admin", adminPassword)
	admin := tokenFor(t, p, "admin", "admin")
	_, gpus := p.api("GET", "/api/v1/gpus", admin, "")
	uuid := gpus["items"].([]any)[1].(map[string]any)["uuid"].(string)
	shared := func() any {
		_, gpus := p.api("GET", "/api/v1/gpus", admin, "")
		for _, g := range gpus["items"].([]any) {
			if g := g.(map[string]any); g["uuid"] == uuid {
				return g["shared_slices"]
			}
		}
		t.Fatalf("GPU %s gone", uuid)
		return nil
	}
	const want = "must be 0 (not shared) or between 2 and 64"

	res, body := p.postFormBody(ac, "/admin/gpus/"+uuid+"/share", url.Values{"slices": {"1"}, "mps_memory_mib": {"0"}, "mps_thread_percent": {"0"}})
	if res.StatusCode != http.StatusBadRequest {
		t.Fatalf("form, 1 slice: status %d", res.StatusCode)
	}
	row := mpDoc(t, body).Find(`[data-testid=gpu-row][data-uuid="` + uuid + `"]`)
	if got := strings.TrimSpace(row.Find(`[data-testid=error-slices]`).Text()); got != want {
		t.Fatalf("slices field says %q, want %q", got, want)
	}
	if s := shared(); s != float64(0) {
		t.Fatalf("the form shared the GPU in %v slices", s)
	}

	code, resp := p.api("PUT", "/api/v1/gpus/"+uuid+"/shared", admin, `{"slices": 1}`)
	if code != http.StatusBadRequest || !strings.Contains(fmt.Sprint(resp["error"]), want) {
		t.Fatalf("API, 1 slice: %d %v", code, resp)
	}
	if s := shared(); s != float64(0) {
		t.Fatalf("the API shared the GPU in %v slices", s)
	}

	if res, _ := p.postFormBody(ac, "/admin/gpus/"+uuid+"/share", url.Values{"slices": {"2"}, "mps_memory_mib": {"0"}, "mps_thread_percent": {"0"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("form, 2 slices: status %d", res.StatusCode)
	}
	_, page := p.get(ac, "/gpus")
	if got := strings.TrimSpace(mpDoc(t, page).Find(`[data-testid=gpu-row][data-uuid="` + uuid + `"] [data-testid=gpu-state]`).Text()); got != "Shared: 2 of 2 slices free" {
		t.Fatalf("state %q", got)
	}
}
