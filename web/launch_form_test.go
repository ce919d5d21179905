package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
)

// The launch form disables (the attribute, not only grey) a flavor that
// cannot fit now and says why; it preselects the cheapest flavor that fits
// and the first image, then the user's last image and flavor; image cards
// show structured facts, among them whether the image is on this server
// and its size.
func TestLaunchFormAtAGlance(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	admin := tokenFor(t, p, "admin", "admin")
	tokenFor(t, p, "alice", "user")
	_, gpus := p.api("GET", "/api/v1/gpus", admin, "")
	uuid := gpus["items"].([]any)[0].(map[string]any)["uuid"].(string)
	if code, _ := p.api("PUT", "/api/v1/gpus/"+uuid+"/drain", admin, `{"drained":true}`); code != 200 {
		t.Fatalf("drain: %d", code)
	}
	c := p.client()
	p.login(c, "alice", "alice-password")
	form := func() *goquery.Document {
		res, body := p.get(c, "/workbenches/new")
		if res.StatusCode != 200 {
			t.Fatalf("launch form: %d", res.StatusCode)
		}
		return mpDoc(t, body)
	}
	flavor := func(doc *goquery.Document, name string) *goquery.Selection {
		return doc.Find(`[data-testid=flavor-choice]`).FilterFunction(func(_ int, s *goquery.Selection) bool {
			v, _ := s.Find(`input[name=flavor]`).Attr("value")
			return v == name
		})
	}
	checked := func(doc *goquery.Document, name string) string {
		v, _ := doc.Find(`input[name=` + name + `][checked]`).Attr("value")
		return v
	}

	doc := form()
	eight := flavor(doc, "8x H100 80GB HBM3")
	// One GPU is drained: 8 GPUs wait for it to come back (not "7 free",
	// which reads as if a free GPU would do, nor ruled out: undrained, it
	// starts).
	if _, dis := eight.Find(`input`).Attr("disabled"); dis || eight.Find(`[data-testid=flavor-unavailable]`).Length() != 0 {
		t.Error("8x H100 with one of 8 GPUs drained is ruled out")
	}
	const drained = "needs 8 GPUs; only 7 are in service now, the others drained or out of order: it waits in the queue until they are back in service"
	if why := strings.TrimSpace(eight.Find(`[data-testid=flavor-waits]`).Text()); why != drained {
		t.Errorf("8x H100 note %q, want %q", why, drained)
	}
	four := flavor(doc, "4x H100 80GB HBM3")
	if _, dis := four.Find(`input`).Attr("disabled"); dis || four.Find(`[data-testid=flavor-unavailable]`).Length() != 0 {
		t.Error("4x H100 with 7 free is disabled")
	}
	if got := checked(doc, "flavor"); got != "CPU small" {
		t.Errorf("preselected flavor %q, want the cheapest that fits, CPU small", got)
	}
	if got := checked(doc, "image"); got != "NVIDIA NGC PyTorch" {
		t.Errorf("preselected image %q, want the first, NVIDIA NGC PyTorch", got)
	}
	card := doc.Find(`[data-testid=image-choice]`).FilterFunction(func(_ int, s *goquery.Selection) bool {
		v, _ := s.Find(`input`).Attr("value")
		return v == "PyTorch (CUDA 12)"
	})
	if fw, cuda, py := card.Find(`[data-testid=fact-framework]`).Text(), card.Find(`[data-testid=fact-cuda]`).Text(),
		card.Find(`[data-testid=fact-python]`).Text(); fw != "PyTorch" || cuda != "12" || py != "3.11" {
		t.Errorf("PyTorch (CUDA 12) facts: framework %q, CUDA %q, Python %q", fw, cuda, py)
	}

	// The last workbench's image and flavor come first next time.
	alice, _ := p.srv.Store.UserByUsername(ctx, "alice")
	img, _ := p.srv.Store.ImageByNameOrID(ctx, "TensorFlow (CUDA)")
	fl, _ := p.srv.Store.FlavorByNameOrID(ctx, "2x H100 80GB HBM3")
	if err := p.srv.Store.CreateWorkbench(ctx, &models.Workbench{Name: "prev", OwnerID: alice.ID, ImageID: img.ID, FlavorID: fl.ID}, models.GPUNeed{}, nil); err != nil {
		t.Fatal(err)
	}
	doc = form()
	if got := checked(doc, "flavor"); got != "2x H100 80GB HBM3" {
		t.Errorf("preselected flavor %q, want the last used, 2x H100 80GB HBM3", got)
	}
	if got := checked(doc, "image"); got != "TensorFlow (CUDA)" {
		t.Errorf("preselected image %q, want the last used, TensorFlow (CUDA)", got)
	}

	// Each card says whether its image is on this server, with its size
	// (the engine's), or that it is downloaded at first launch.
	here := &models.Image{Name: "here", Image: fakeJupyterImage(t), StartCommand: img.StartCommand, Enabled: true}
	away := &models.Image{Name: "away", Image: "127.0.0.1:1/workbench-test/away:1", StartCommand: img.StartCommand, Enabled: true}
	for _, im := range []*models.Image{here, away} {
		if err := p.srv.Store.CreateImage(ctx, im); err != nil {
			t.Fatal(err)
		}
	}
	// A flavor larger than the server (here the simulated DGX: 224 CPU
	// threads) is disabled with the reason, never capped and billed.
	wide := &models.Flavor{Name: "wide", CPUMilli: 500 * 1000, MemoryMiB: 8 << 10, ShmMiB: 64, Enabled: true}
	if err := p.srv.Store.CreateFlavor(ctx, wide); err != nil {
		t.Fatal(err)
	}
	doc = form()
	if w := flavor(doc, "wide"); !w.Find(`input`).Is(`[disabled]`) ||
		strings.TrimSpace(w.Find(`[data-testid=flavor-unavailable]`).Text()) != "needs 500 CPUs; this server has 224" {
		t.Errorf("flavor above the server: disabled %v, reason %q", w.Find(`input`).Is(`[disabled]`), w.Find(`[data-testid=flavor-unavailable]`).Text())
	}
	imageCard := func(name string) *goquery.Selection {
		return doc.Find(`[data-testid=image-choice]`).FilterFunction(func(_ int, s *goquery.Selection) bool {
			v, _ := s.Find(`input`).Attr("value")
			return v == name
		})
	}
	if c := imageCard("here"); strings.TrimSpace(c.Find(`[data-testid=fact-present]`).Text()) != "yes" ||
		!strings.HasSuffix(c.Find(`[data-testid=fact-size]`).Text(), "MB") {
		t.Errorf("image on the server: present %q, size %q", c.Find(`[data-testid=fact-present]`).Text(), c.Find(`[data-testid=fact-size]`).Text())
	}
	if c := imageCard("away"); strings.TrimSpace(c.Find(`[data-testid=fact-present]`).Text()) != "no: downloaded at first launch" ||
		c.Find(`[data-testid=fact-size]`).Length() != 0 {
		t.Errorf("image not on the server: present %q, size %q", c.Find(`[data-testid=fact-present]`).Text(), c.Find(`[data-testid=fact-size]`).Text())
	}
}
