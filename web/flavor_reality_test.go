package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Flavors are validated against this server: the GPU model must be one of
// the pool's (400 naming gpu_model and listing the known ones), and CPU
// cores above the host's are refused (400 naming cpu_cores), in the API
// and in the admin form, which offers the pool's models as a select.
func TestFlavorValidatedAgainstServer(t *testing.T) {
	p := newPortal(t)
	c, admin := mpAdmin(t, p)
	const h100 = "NVIDIA H100 80GB HBM3"

	code, body := p.api("POST", "/api/v1/flavors", admin, `{"name":"ghost","gpu_model":"NVIDIA B300","gpu_count":1,"cpu_cores":1,"memory_gib":8}`)
	if code != http.StatusBadRequest || errCode(body) != "invalid_gpu_model" {
		t.Fatalf("unknown GPU model: %d %v, want 400 invalid_gpu_model", code, body)
	}
	if msg := body["error"].(map[string]any)["message"].(string); !strings.Contains(msg, h100) {
		t.Errorf("message %q does not list the known model %s", msg, h100)
	}
	code, body = p.api("POST", "/api/v1/flavors", admin, `{"name":"huge","cpu_cores":511,"memory_gib":8}`)
	if code != http.StatusBadRequest || errCode(body) != "invalid_cpu_cores" {
		t.Fatalf("511 CPU cores: %d %v, want 400 invalid_cpu_cores", code, body)
	}
	if msg := body["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "CPU cores") {
		t.Errorf("message %q does not say how many cores the server has", msg)
	}
	// More whole GPUs than the server has of the model could only queue.
	code, body = p.api("POST", "/api/v1/flavors", admin, `{"name":"nine","gpu_model":"`+h100+`","gpu_count":9,"cpu_cores":1,"memory_gib":8}`)
	if code != http.StatusBadRequest || errCode(body) != "invalid_gpu_count" {
		t.Fatalf("9 GPUs on an 8-GPU server: %d %v, want 400 invalid_gpu_count", code, body)
	}
	if msg := body["error"].(map[string]any)["message"].(string); msg != "gpu_count: this server has 8 × "+h100+" that can be handed out whole (GPUs split into MIG instances cannot); a flavor cannot ask for 9" {
		t.Errorf("message %q", msg)
	}
	// Past the portal's own bound (16) too: what this server has is what
	// the admin needs to read.
	code, body = p.api("POST", "/api/v1/flavors", admin, `{"name":"many","gpu_model":"`+h100+`","gpu_count":99,"cpu_cores":1,"memory_gib":8}`)
	if msg, _ := body["error"].(map[string]any)["message"].(string); code != http.StatusBadRequest || msg != "gpu_count: this server has 8 × "+h100+" that can be handed out whole (GPUs split into MIG instances cannot); a flavor cannot ask for 99" {
		t.Errorf("99 GPUs: %d %v", code, body)
	}
	if code, body := p.api("POST", "/api/v1/flavors", admin, `{"name":"eight","gpu_model":"`+h100+`","gpu_count":8,"cpu_cores":1,"memory_gib":8}`); code != http.StatusCreated {
		t.Fatalf("all 8 GPUs: %d %v", code, body)
	}
	// A known model within the host's cores is accepted.
	if code, body := p.api("POST", "/api/v1/flavors", admin, `{"name":"ok","gpu_model":"`+h100+`","gpu_count":1,"cpu_cores":1,"memory_gib":8}`); code != http.StatusCreated {
		t.Fatalf("valid flavor: %d %v", code, body)
	}
	_, list := p.api("GET", "/api/v1/flavors", admin, "")
	for _, it := range list["items"].([]any) {
		if n := it.(map[string]any)["name"]; n == "ghost" || n == "huge" || n == "nine" {
			t.Errorf("refused flavor %v was saved", n)
		}
	}

	// The form: a select of the pool's models; a bad model is refused in the page.
	_, page := p.get(c, "/admin/flavors/new")
	if title := mpDoc(t, page).Find("title").Text(); !strings.HasPrefix(title, "New flavor") {
		t.Errorf("the new-flavor page is titled %q", title)
	}
	opts := mpDoc(t, page).Find(`select[name=gpu_model] option`)
	var values []string
	for i := range opts.Nodes {
		v, _ := opts.Eq(i).Attr("value")
		values = append(values, v)
	}
	if strings.Join(values, "|") != "|"+h100 {
		t.Errorf("model select offers %q, want none and %s", values, h100)
	}
	st, _, resp := mpPost(t, p, c, "/admin/flavors", url.Values{"name": {"ghost"}, "gpu_model": {"NVIDIA B300"}, "gpu_count": {"1"},
		"cpu_cores": {"1"}, "memory_gib": {"8"}, "shm_mib": {"64"}, "max_runtime_hours": {"0"}, "enabled": {"true"}})
	if st != http.StatusBadRequest || mpDoc(t, resp).Find(`[data-testid=error-gpu_model]`).Length() != 1 {
		t.Errorf("form with an unknown model: %d, want 400 with the gpu_model error", st)
	}
}

// The admin flavor form's CPU input and the server hold one bound: the
// input's max is what the server refuses past, and its refusal names that
// bound (the input allowed at most 224 cores while the server said "must
// be between 0.1 and 512").
func TestFlavorFormCPUBoundIsTheServers(t *testing.T) {
	p := newPortal(t)
	c, _ := mpAdmin(t, p)
	_, page := p.get(c, "/admin/flavors/new")
	max, ok := mpDoc(t, page).Find(`input[name=cpu_cores]`).Attr("max")
	if !ok || max == "" {
		t.Fatalf("the CPU input has no max")
	}
	form := func(cores string) url.Values {
		return url.Values{"name": {"cpu-" + strings.ReplaceAll(cores, ".", "-")}, "gpu_model": {""}, "gpu_count": {"0"}, "cpu_cores": {cores},
			"memory_gib": {"8"}, "shm_mib": {"64"}, "max_runtime_hours": {"0"}, "enabled": {"true"}}
	}
	for _, cores := range []string{"0.05", "9999"} {
		st, _, resp := mpPost(t, p, c, "/admin/flavors", form(cores))
		msg := strings.TrimSpace(mpDoc(t, resp).Find(`[data-testid=error-cpu_cores]`).Text())
		if st != http.StatusBadRequest || !strings.Contains(msg, max) {
			t.Errorf("%s cores: %d %q, want 400 naming the input's max %s", cores, st, msg, max)
		}
	}
	if st, _, _ := mpPost(t, p, c, "/admin/flavors", form(max)); st != http.StatusSeeOther && st != http.StatusFound && st != http.StatusOK {
		t.Errorf("the input's max (%s cores) refused: %d", max, st)
	}
}
