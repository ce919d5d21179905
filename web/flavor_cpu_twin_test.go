package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"
)

// The admin names a GPU flavor's CPU-only twin on its form: the choices
// are the flavors without GPUs; a flavor with GPUs as twin is refused on
// the form with the field's error (nothing saved); a good one is saved,
// shown selected, and in the flavors API as cpu_twin_id.
func TestFlavorFormCPUTwin(t *testing.T) {
	p := newPortal(t)
	c, admin := mpAdmin(t, p)
	ctx := context.Background()
	gpu, err := p.srv.Store.FlavorByNameOrID(ctx, "1x H100 80GB HBM3")
	if err != nil {
		t.Fatal(err)
	}
	cpu, err := p.srv.Store.FlavorByNameOrID(ctx, "CPU small")
	if err != nil {
		t.Fatal(err)
	}
	other, err := p.srv.Store.FlavorByNameOrID(ctx, "2x H100 80GB HBM3")
	if err != nil {
		t.Fatal(err)
	}
	_, page := p.get(c, fmt.Sprintf("/admin/flavors/%d/edit", gpu.ID))
	doc := mpDoc(t, page)
	if doc.Find(fmt.Sprintf(`[data-testid=flavor-cpu-twin] option[value="%d"]`, cpu.ID)).Length() != 1 ||
		doc.Find(fmt.Sprintf(`[data-testid=flavor-cpu-twin] option[value="%d"]`, other.ID)).Length() != 0 {
		t.Fatalf("twin choices: %s", doc.Find(`[data-testid=flavor-cpu-twin]`).Text())
	}
	form := func(twin int64) url.Values {
		return url.Values{"name": {gpu.Name}, "gpu_model": {gpu.GPUModel}, "gpu_count": {"1"}, "cpu_cores": {"1"},
			"memory_gib": {"1"}, "shm_mib": {"64"}, "max_runtime_hours": {"0"},
			"enabled": {"true"}, "cpu_twin_id": {fmt.Sprint(twin)}}
	}
	st, _, resp := mpPost(t, p, c, fmt.Sprintf("/admin/flavors/%d", gpu.ID), form(other.ID))
	if st != http.StatusBadRequest || mpDoc(t, resp).Find(`[data-testid=error-cpu_twin_id]`).Length() != 1 {
		t.Fatalf("GPU flavor as twin: %d, want 400 with the cpu_twin_id error; errors: %s", st, mpDoc(t, resp).Find(`[data-testid^=error-]`).Text())
	}
	if st, _, _ := mpPost(t, p, c, fmt.Sprintf("/admin/flavors/%d", gpu.ID), form(cpu.ID)); st != http.StatusSeeOther {
		t.Fatalf("save twin: %d", st)
	}
	_, page = p.get(c, fmt.Sprintf("/admin/flavors/%d/edit", gpu.ID))
	if v, _ := mpDoc(t, page).Find(`[data-testid=flavor-cpu-twin] option[selected]`).Attr("value"); v != fmt.Sprint(cpu.ID) {
		t.Fatalf("selected twin %q, want %d", v, cpu.ID)
	}
	_, list := p.api("GET", "/api/v1/flavors", admin, "")
	for _, it := range list["items"].([]any) {
		if f := it.(map[string]any); f["name"] == gpu.Name && f["cpu_twin_id"] != float64(cpu.ID) {
			t.Fatalf("API flavor %v, want cpu_twin_id %d", f, cpu.ID)
		}
	}
}
