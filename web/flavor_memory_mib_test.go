package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
)

// Flavor memory is whole MiB: the API's memory_gib takes decimals down to
// one MiB (1.5 → 1536 MiB) and memory_mib says the same in MiB; both come
// back in the JSON; a size finer than a MiB is refused naming memory_gib;
// the admin form saves 0.75 GiB and shows it back as typed.
func TestFlavorMemoryInMiB(t *testing.T) {
	p := newPortal(t)
	c, admin := mpAdmin(t, p)
	code, fl := p.api("POST", "/api/v1/flavors", admin, `{"name":"one and a half","cpu_cores":1,"memory_gib":1.5}`)
	if code != http.StatusCreated || fl["memory_gib"] != 1.5 || fl["memory_mib"] != float64(1536) {
		t.Fatalf("memory_gib 1.5: %d %v", code, fl)
	}
	code, fl = p.api("POST", "/api/v1/flavors", admin, `{"name":"three","cpu_cores":1,"memory_mib":3072}`)
	if code != http.StatusCreated || fl["memory_gib"] != float64(3) || fl["memory_mib"] != float64(3072) {
		t.Fatalf("memory_mib 3072: %d %v", code, fl)
	}
	if code, body := p.api("POST", "/api/v1/flavors", admin, `{"name":"fine","cpu_cores":1,"memory_gib":1.0001}`); code != http.StatusBadRequest || errCode(body) != "invalid_memory_gib" {
		t.Fatalf("memory_gib 1.0001: %d %v, want 400 invalid_memory_gib", code, body)
	}

	st, _, _ := mpPost(t, p, c, "/admin/flavors", url.Values{"name": {"three quarters"}, "gpu_count": {"0"}, "cpu_cores": {"1"},
		"memory_gib": {"0.75"}, "shm_mib": {"64"}, "max_runtime_hours": {"0"}, "enabled": {"true"}})
	if st != http.StatusSeeOther && st != http.StatusOK {
		t.Fatalf("form with 0.75 GiB: %d", st)
	}
	_, list := p.api("GET", "/api/v1/flavors", admin, "")
	var id any
	for _, it := range list["items"].([]any) {
		if f := it.(map[string]any); f["name"] == "three quarters" {
			if f["memory_mib"] != float64(768) || f["memory_gib"] != 0.75 {
				t.Fatalf("form flavor read back %v", f)
			}
			id = f["id"]
		}
	}
	if id == nil {
		t.Fatalf("form flavor not saved: %v", list)
	}
	_, page := p.get(c, fmt.Sprintf("/admin/flavors/%v/edit", id))
	if v, _ := mpDoc(t, page).Find(`input[name=memory_gib]`).Attr("value"); v != "0.75" {
		t.Fatalf("edit form shows memory %q, want 0.75", v)
	}
	st, _, resp := mpPost(t, p, c, "/admin/flavors", url.Values{"name": {"fine"}, "gpu_count": {"0"}, "cpu_cores": {"1"},
		"memory_gib": {"0.0001"}, "shm_mib": {"0"}, "max_runtime_hours": {"0"}, "enabled": {"true"}})
	if st != http.StatusBadRequest || mpDoc(t, resp).Find(`[data-testid=error-memory_gib]`).Length() != 1 {
		t.Fatalf("form with 0.0001 GiB: %d, want 400 with the memory_gib error", st)
	}
}
