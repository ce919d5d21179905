package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
	"workbench/web"
)

// TestQueuedPageOffersUnitsOnlyALowerClassWaitsFor: "free now under
// another flavor" leaves to the queue only what it owes a launch of the
// class the new one would take, or above. The researcher's own preemptible
// 4-GPU run, waiting with 3 whole GPUs free, hid every whole-GPU flavor
// from the page of her queued slice launch, though an interactive 1-GPU
// launch goes ahead of the lower class and starts at once. Once a launch of
// the interactive class waits for those GPUs, they are the queue's again.
func TestQueuedPageOffersUnitsOnlyALowerClassWaitsFor(t *testing.T) {
	p := newPortal(t, func(c *web.Config) {
		c.Workbenches.DrainEvery, c.Workbenches.ReconcileEvery = time.Hour, time.Hour
	})
	ctx := context.Background()
	admin := tokenFor(t, p, "admin", "admin")
	_, gpus := p.api("GET", "/api/v1/gpus", admin, "")
	var all []string
	for _, g := range gpus["items"].([]any) {
		all = append(all, g.(map[string]any)["uuid"].(string))
	}
	whole, err := p.srv.Store.FlavorByNameOrID(ctx, "1x H100 80GB HBM3")
	if err != nil {
		t.Fatal(err)
	}
	model := whole.GPUModel
	// GPU 0 shared in 2 slices, both held by bob, as are GPUs 1–4: 3 whole
	// GPUs free, no slice.
	if code, out := p.api("PUT", "/api/v1/gpus/"+all[0]+"/shared", admin, `{"slices": 2}`); code != 200 {
		t.Fatalf("share: %d %v", code, out)
	}
	if code, out := p.api("POST", "/api/v1/flavors", admin, fmt.Sprintf(`{"name": "class-slice", "gpu_model": %q, "gpu_count": 1, "unit_kind": "slice", "cpu_cores": 1, "memory_gib": 1}`, model)); code != 201 {
		t.Fatalf("slice flavor: %d %v", code, out)
	}
	tokenFor(t, p, "bob", "user")
	bob, _ := p.srv.Store.UserByUsername(ctx, "bob")
	for i := range 2 {
		p.runningRecord(bob, fmt.Sprintf("slice-%d", i), models.GPUNeed{Kind: models.UnitSlice, Model: model, Count: 1, Candidates: []string{all[0]}})
	}
	p.runningRecord(bob, "four", models.GPUNeed{Model: model, Count: 4, Candidates: all[1:5]})

	alice := tokenFor(t, p, "alice", "user")
	code, big := p.api("POST", "/api/v1/workbenches", alice, `{"name":"big","image":"PyTorch (CUDA 12)","flavor":"4x H100 80GB HBM3","queue":true,"priority":"preemptible"}`)
	if code != http.StatusAccepted || big["state"] != "queued" {
		t.Fatalf("alice's preemptible 4-GPU run: %d %v, want queued", code, big)
	}
	code, waiter := p.api("POST", "/api/v1/workbenches", alice, `{"name":"waiter","image":"PyTorch (CUDA 12)","flavor":"class-slice","queue":true}`)
	if code != http.StatusAccepted || waiter["state"] != "queued" {
		t.Fatalf("alice's slice: %d %v, want queued", code, waiter)
	}
	hc := p.client()
	p.login(hc, "alice", "alice-password")
	offered := func() []string {
		t.Helper()
		_, body := p.get(hc, "/workbenches/"+waiter["id"].(string))
		var out []string
		mpDoc(t, body).Find(`[data-testid=free-instead-flavor]`).Each(func(_ int, s *goquery.Selection) {
			out = append(out, strings.Join(strings.Fields(s.Text()), " "))
		})
		return out
	}
	got := offered()
	if len(got) != 2 || !strings.Contains(got[0], "1x H100 80GB HBM3") || !strings.Contains(got[1], "2x H100 80GB HBM3") ||
		!strings.Contains(got[0], "3 GPUs free") {
		t.Errorf("offered beside a lower class's wait: %q, want the 1- and 2-GPU flavors (3 GPUs free)", got)
	}
	// Not on the preemptible run's own page: those are the units it waits for.
	if _, body := p.get(hc, "/workbenches/"+big["id"].(string)); strings.Contains(mpDoc(t, body).Find(`[data-testid=queue-free-instead]`).Text(), "H100 80GB HBM3") {
		t.Errorf("the whole GPUs offered on the page of the run that waits for them")
	}

	// An interactive launch waits for 4 of the 3: the queue owes it every
	// free whole GPU.
	dave := tokenFor(t, p, "dave", "user")
	if code, out := p.api("POST", "/api/v1/workbenches", dave, `{"name":"pair","image":"PyTorch (CUDA 12)","flavor":"4x H100 80GB HBM3","queue":true}`); code != http.StatusAccepted || out["state"] != "queued" {
		t.Fatalf("dave's interactive 4-GPU launch: %d %v, want queued", code, out)
	}
	if got := offered(); len(got) != 0 {
		t.Errorf("offered while an interactive launch waits for the whole GPUs: %q", got)
	}
}
