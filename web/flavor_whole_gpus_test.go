package web_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
	"workbench/web"
)

// On a DGX H100 with GPU 7 split into MIG instances only 7 GPUs are whole.
// The first start seeded an "8x" flavor every launch of which was refused
// (409 no_capacity), the admin flavor form accepted 8 GPUs (it counted the
// split one), and the catalog showed "Free now: 7 GPUs" beside it with no
// word that it could never launch. Now: no 8x flavor is seeded (a 7x one
// is), the form counts whole GPUs as the launch does, and the catalog
// shows the launch form's note for a flavor too big for the server.
func TestFlavorsCountOnlyWholeGPUs(t *testing.T) {
	p := newPortal(t, func(c *web.Config) { c.MockMIG = "7:1g.10gb*7" })
	ctx := context.Background()
	const h100 = "NVIDIA H100 80GB HBM3"
	fls, err := p.srv.Store.ListFlavors(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	var whole []string
	for _, f := range fls {
		if f.GPUModel == h100 && (f.UnitKind == models.UnitGPU || f.UnitKind == "") {
			whole = append(whole, f.Name)
		}
	}
	slices.Sort(whole)
	if want := []string{"1x H100 80GB HBM3", "2x H100 80GB HBM3", "4x H100 80GB HBM3", "7x H100 80GB HBM3"}; !slices.Equal(whole, want) {
		t.Errorf("seeded whole-GPU flavors %q, want %q", whole, want)
	}

	c, admin := mpAdmin(t, p)
	code, body := p.api("POST", "/api/v1/flavors", admin, `{"name":"eight","gpu_model":"`+h100+`","gpu_count":8,"cpu_cores":1,"memory_gib":8}`)
	if code != http.StatusBadRequest || errCode(body) != "invalid_gpu_count" {
		t.Fatalf("8 GPUs with 7 whole: %d %v, want 400 invalid_gpu_count", code, body)
	}
	if msg := body["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "this server has 7 × "+h100) {
		t.Errorf("message %q does not count the 7 whole GPUs", msg)
	}
	if code, body := p.api("POST", "/api/v1/flavors", admin, `{"name":"seven","gpu_model":"`+h100+`","gpu_count":7,"cpu_cores":1,"memory_gib":8}`); code != http.StatusCreated {
		t.Fatalf("all 7 whole GPUs: %d %v", code, body)
	}

	// One made before GPU 7 was split (the store takes it as it is): the
	// catalog says what the launch form says of it.
	big := &models.Flavor{Name: "8x old", GPUModel: h100, GPUCount: 8, CPUMilli: 1000, MemoryMiB: 8192, ShmMiB: 64, Enabled: true}
	if err := p.srv.Store.CreateFlavor(ctx, big); err != nil {
		t.Fatal(err)
	}
	const note = "needs 8 GPUs; 7 of this server's 8 can be handed out whole (the rest are split into MIG instances)"
	text := func(s *goquery.Selection) string { return strings.Join(strings.Fields(s.Text()), " ") }
	_, page := p.get(c, "/workbenches/new")
	card := mpDoc(t, page).Find(`[data-testid=flavor-choice]`).FilterFunction(func(_ int, s *goquery.Selection) bool {
		return s.Find(`input[value="8x old"]`).Length() == 1
	})
	if got := text(card.Find(`[data-testid=flavor-unavailable]`)); got != note {
		t.Errorf("launch form's note %q, want %q", got, note)
	}
	_, page = p.get(c, "/catalog")
	for _, name := range []string{"8x old", "7x H100 80GB HBM3"} {
		row := mpDoc(t, page).Find(`[data-testid=flavor-row]`).FilterFunction(func(_ int, s *goquery.Selection) bool {
			return strings.TrimSpace(s.Find(`td`).First().Text()) == name
		})
		if row.Length() != 1 {
			t.Fatalf("catalog rows of %s: %d, want 1", name, row.Length())
		}
		want := ""
		if name == "8x old" {
			want = note
		}
		if got := text(row.Find(`[data-testid=flavor-unavailable]`)); got != want {
			t.Errorf("catalog's note for %s: %q, want %q", name, got, want)
		}
	}
}
