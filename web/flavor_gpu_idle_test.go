package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"testing"
)

// The GPU-idle timeout is set per flavor in the API (seconds) and the
// admin form (minutes); a bad value is refused naming the field, and an
// edit that leaves it as shown keeps it.
func TestFlavorGPUIdleTimeoutSetting(t *testing.T) {
	p := newPortal(t)
	c, admin := mpAdmin(t, p)
	const h100 = "NVIDIA H100 80GB HBM3"
	code, body := p.api("POST", "/api/v1/flavors", admin,
		`{"name":"idle-h","gpu_model":"`+h100+`","gpu_count":1,"cpu_cores":1,"memory_gib":8,"gpu_idle_timeout_seconds":3600}`)
	if code != http.StatusCreated || body["gpu_idle_timeout_seconds"] != float64(3600) {
		t.Fatalf("create with GPU-idle timeout: %d %v", code, body)
	}
	id := int64(body["id"].(float64))
	if code, body := p.api("POST", "/api/v1/flavors", admin,
		`{"name":"neg","cpu_cores":1,"memory_gib":8,"gpu_idle_timeout_seconds":-60}`); code != 400 || errCode(body) != "invalid_gpu_idle_timeout_seconds" {
		t.Fatalf("negative GPU-idle timeout: %d %v", code, body)
	}

	_, page := p.get(c, "/admin/flavors/"+strconv.FormatInt(id, 10)+"/edit")
	in := mpDoc(t, page).Find(`input[name=gpu_idle_timeout_minutes]`)
	if v, _ := in.Attr("value"); v != "60" {
		t.Fatalf("edit form shows GPU-idle timeout %q min, want 60", v)
	}
	form := url.Values{"name": {"idle-h"}, "gpu_model": {h100}, "gpu_count": {"1"}, "cpu_cores": {"1"}, "memory_gib": {"8"},
		"shm_mib": {"64"}, "max_runtime_hours": {"0"}, "gpu_idle_timeout_minutes": {"45"}, "enabled": {"true"}}
	if st, _, resp := mpPost(t, p, c, "/admin/flavors/"+strconv.FormatInt(id, 10), form); st != http.StatusSeeOther {
		t.Fatalf("save form: %d %s", st, resp)
	}
	fl, err := p.srv.Store.FlavorByID(context.Background(), id)
	if err != nil || fl.GPUIdleTimeoutS != 45*60 {
		t.Fatalf("stored GPU-idle timeout %d s, want 2700 (%v)", fl.GPUIdleTimeoutS, err)
	}
	form.Set("gpu_idle_timeout_minutes", "soon")
	st, _, resp := mpPost(t, p, c, "/admin/flavors/"+strconv.FormatInt(id, 10), form)
	if st != http.StatusBadRequest || mpDoc(t, resp).Find(`[data-testid=error-gpu_idle_timeout_minutes]`).Length() != 1 {
		t.Errorf("form with a bad GPU-idle timeout: %d, want 400 naming the field", st)
	}
	if fl, _ := p.srv.Store.FlavorByID(context.Background(), id); fl.GPUIdleTimeoutS != 45*60 {
		t.Errorf("a refused form changed the timeout to %d", fl.GPUIdleTimeoutS)
	}
}
