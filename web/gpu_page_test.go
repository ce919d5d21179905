package web_test

import (
	"context"
	"strings"
	"testing"

	"workbench/models"
)

// /gpus: one summary per model first (free of total, price per GPU-hour,
// a launch link), then the table with human state labels and GPUs named
// "GPU 0 · H100 80GB HBM3" with the UUID on hover; admins see which
// workbench and user hold a busy GPU, others do not.
func TestGPUPageSummaryAndHolders(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	admin := tokenFor(t, p, "admin", "admin")
	tokenFor(t, p, "alice", "user")
	tokenFor(t, p, "bob", "user")
	_, gpus := p.api("GET", "/api/v1/gpus", admin, "")
	first := gpus["items"].([]any)[0].(map[string]any)
	uuid, model := first["uuid"].(string), first["model"].(string)
	alice, _ := p.srv.Store.UserByUsername(ctx, "alice")
	wb := &models.Workbench{Name: "train", OwnerID: alice.ID, ImageID: 1, FlavorID: 1}
	if err := p.srv.Store.CreateWorkbench(ctx, wb, models.GPUNeed{Model: model, Count: 1, Candidates: []string{uuid}}, nil); err != nil {
		t.Fatal(err)
	}

	ac, _ := mpAdmin(t, p)
	_, body := p.get(ac, "/gpus")
	doc := mpDoc(t, body)
	sum := doc.Find(`[data-testid=gpu-model]`)
	if sum.Length() != 1 {
		t.Fatalf("%d model summaries, want 1 (mock DGX H100)", sum.Length())
	}
	if free := strings.TrimSpace(sum.Find(`[data-testid=gpu-model-free]`).Text()); free != "7 of 8 free" {
		t.Errorf("summary %q, want 7 of 8 free", free)
	}
	if price := strings.TrimSpace(sum.Find(`[data-testid=gpu-model-price]`).Text()); price != "3.00 USD/GPU-h" {
		t.Errorf("price %q, want 3.00 USD/GPU-h", price)
	}
	if href, _ := sum.Find(`[data-testid=gpu-model-launch]`).Attr("href"); href != "/workbenches/new?flavor=1x+H100+80GB+HBM3" {
		t.Errorf("launch link %q", href)
	}
	if s, tb := strings.Index(body, `data-testid="gpu-model-summary"`), strings.Index(body, `data-testid="gpu-table"`); s < 0 || tb < 0 || s > tb {
		t.Error("the summary is not above the table")
	}
	row := doc.Find(`[data-testid=gpu-row][data-uuid="` + uuid + `"]`)
	name := row.Find(`[data-testid=gpu-name]`)
	if title, _ := name.Attr("title"); strings.TrimSpace(name.Text()) != "GPU 0 · H100 80GB HBM3" || title != uuid {
		t.Errorf("GPU name %q title %q, want \"GPU 0 · H100 80GB HBM3\" with the UUID", name.Text(), title)
	}
	if st := strings.TrimSpace(row.Find(`[data-testid=gpu-state]`).Text()); st != "In use" {
		t.Errorf("state label %q, want In use", st)
	}
	if holder := strings.TrimSpace(row.Find(`[data-testid=gpu-holder]`).Text()); holder != "train · alice" {
		t.Errorf("admin sees holder %q, want train · alice", holder)
	}
	if st := strings.TrimSpace(doc.Find(`[data-testid=gpu-row]`).Eq(1).Find(`[data-testid=gpu-state]`).Text()); st != "Free" {
		t.Errorf("free GPU labelled %q", st)
	}

	bc := p.client()
	p.login(bc, "bob", "bob-password")
	_, body = p.get(bc, "/gpus")
	if n := mpDoc(t, body).Find(`[data-testid=gpu-holder]`).Length(); n != 0 {
		t.Errorf("bob sees %d holders of other people's GPUs", n)
	}
	cc := p.client()
	p.login(cc, "alice", "alice-password")
	_, body = p.get(cc, "/gpus")
	if h := strings.TrimSpace(mpDoc(t, body).Find(`[data-testid=gpu-holder]`).Text()); h != "your workbench train" {
		t.Errorf("alice sees holder %q, want her own workbench", h)
	}

	// Drained while held: the label says both, not a plain "In use".
	if code, out := p.api("PUT", "/api/v1/gpus/"+uuid+"/drain", admin, `{"drained": true}`); code != 200 {
		t.Fatalf("drain: %d %v", code, out)
	}
	_, body = p.get(cc, "/gpus")
	row = mpDoc(t, body).Find(`[data-testid=gpu-row][data-uuid="` + uuid + `"]`)
	if st := strings.TrimSpace(row.Find(`[data-testid=gpu-state]`).Text()); st != "In use · drained (not offered again when free)" {
		t.Errorf("a drained GPU in use reads %q", st)
	}
}
