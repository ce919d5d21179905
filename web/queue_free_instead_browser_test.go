package web_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"workbench/models"
)

// A student queued for a GPU slice while a whole GPU sits free is pointed
// at it: the queued page lists the free flavor, with a link to the launch
// form that chooses it and the same image; she clicks it, launches, and
// the new workbench runs while the first keeps its place. A free kind of
// unit that someone else waits for (a 2-GPU launch queued with 1 free) is
// the queue's to give, so it is not offered until they leave the queue.
func TestBrowserQueuedPagePointsAtAFreeFlavor(t *testing.T) {
	p, _ := enginePortal(t)
	ctx := context.Background()
	admin := tokenFor(t, p, "admin", "admin")
	_, gpus := p.api("GET", "/api/v1/gpus", admin, "")
	items := gpus["items"].([]any)
	model := items[0].(map[string]any)["model"].(string)
	// GPU 0 shared in 2 slices, GPU 1 whole and free, the other six drained.
	if code, out := p.api("PUT", "/api/v1/gpus/"+items[0].(map[string]any)["uuid"].(string)+"/shared", admin, `{"slices": 2}`); code != 200 {
		t.Fatalf("share: %d %v", code, out)
	}
	for _, it := range items[2:] {
		if code, out := p.api("PUT", "/api/v1/gpus/"+it.(map[string]any)["uuid"].(string)+"/drain", admin, `{"drained":true}`); code != 200 {
			t.Fatalf("drain: %d %v", code, out)
		}
	}
	if code, out := p.api("POST", "/api/v1/flavors", admin, fmt.Sprintf(`{"name": "class-slice", "gpu_model": %q, "gpu_count": 1, "unit_kind": "slice", "cpu_cores": 1, "memory_gib": 1}`, model)); code != 201 {
		t.Fatalf("slice flavor: %d %v", code, out)
	}
	bob := tokenFor(t, p, "bob", "user")
	for i := range 2 {
		code, out := p.api("POST", "/api/v1/workbenches", bob, fmt.Sprintf(`{"name":"slice-%d","image":"fake","flavor":"class-slice"}`, i))
		if code != http.StatusAccepted {
			t.Fatalf("bob's slice %d: %d %v", i, code, out)
		}
		waitState(t, p, bob, out["id"].(string), "running")
	}
	if _, err := p.srv.Store.CreateUser(ctx, models.NewUser{Username: "alice", Password: "alice-password", Role: "user"}); err != nil {
		t.Fatal(err)
	}
	alice := tokenFor(t, p, "alice", "user")
	code, queued := p.api("POST", "/api/v1/workbenches", alice, `{"name":"waiter","image":"fake","flavor":"class-slice","queue":true}`)
	if code != http.StatusAccepted || queued["state"] != "queued" {
		t.Fatalf("alice's slice: %d %v, want queued", code, queued)
	}
	// dave waits for two whole GPUs, one is free: it is his turn next.
	dave := tokenFor(t, p, "dave", "user")
	code, daves := p.api("POST", "/api/v1/workbenches", dave, `{"name":"pair","image":"fake","flavor":"2x H100 80GB HBM3","queue":true}`)
	if code != http.StatusAccepted || daves["state"] != "queued" {
		t.Fatalf("dave's pair: %d %v, want queued", code, daves)
	}
	page := "/workbenches/" + queued["id"].(string)
	hc := p.client()
	p.login(hc, "alice", "alice-password")
	if _, body := p.get(hc, page); mpDoc(t, body).Find(`[data-testid=queue-free-instead]`).Length() != 0 {
		t.Fatalf("the whole GPU dave waits for is offered to alice:\n%s", mpDoc(t, body).Find(`[data-testid=queue-free-instead]`).Text())
	}
	if code, out := p.api("POST", "/api/v1/workbenches/"+daves["id"].(string)+"/stop", dave, ""); code != 200 {
		t.Fatalf("dave leaves the queue: %d %v", code, out)
	}

	bc := btNewBrowser(t)
	btNavigate(t, bc, p.ts.URL+"/login")
	if resp := btLogin(t, bc, "alice", "alice-password"); resp.Status != http.StatusOK {
		t.Fatalf("login: %d", resp.Status)
	}
	btNavigate(t, bc, p.ts.URL+page)
	btDo(t, bc, "wait for the queue notice", chromedp.WaitVisible(chromedp.CSS(`[data-testid=queue-free-instead]`)))
	offered := btTexts(t, bc, `[data-testid=free-instead-flavor]`)
	if len(offered) != 1 || !strings.Contains(offered[0], "1x H100 80GB HBM3") || !strings.Contains(offered[0], "1 GPU free") {
		t.Fatalf("offered %q, want the free 1x H100 flavor alone", offered)
	}
	if resp := btSubmit(t, bc, "follow the free flavor", chromedp.Click(chromedp.CSS(`[data-testid=free-instead-launch]`))); resp.Status != http.StatusOK {
		t.Fatalf("launch form: %d at %s", resp.Status, resp.URL)
	}
	chosen, err := chromedp.Run(bc, chromedp.Evaluate[[]bool](`[
		document.querySelector('[data-testid=flavor-choice] input[name=flavor][value="1x H100 80GB HBM3"]').checked,
		document.querySelector('[data-testid=image-choice] input[name=image][value="fake"]').checked]`))
	if err != nil || len(chosen) != 2 || !chosen[0] || !chosen[1] {
		t.Fatalf("the launch form has flavor, image chosen = %v (%v)", chosen, err)
	}
	btDo(t, bc, "name it", chromedp.SendKeys(chromedp.CSS(`input[name=name]`), "now"))
	if resp := btSubmit(t, bc, "launch", chromedp.Click(chromedp.CSS(`[data-testid=launch-submit]`))); resp.Status != http.StatusOK {
		t.Fatalf("launch: %d at %s", resp.Status, resp.URL)
	}
	if state, seen := btWaitWorkbenchState(t, bc, "running", 90*time.Second); state != "running" {
		t.Fatalf("the new workbench shows %q (seen %v), want running", state, seen)
	}
	if code, out := p.api("GET", "/api/v1/workbenches/"+queued["id"].(string), alice, ""); code != 200 || out["state"] != "queued" {
		t.Fatalf("the first workbench after the launch: %d %v, want still queued", code, out)
	}
	// Nothing whole is free now: the notice is gone.
	if _, body := p.get(hc, page); mpDoc(t, body).Find(`[data-testid=queue-free-instead]`).Length() != 0 {
		t.Fatalf("a flavor is still offered with nothing free")
	}
}
