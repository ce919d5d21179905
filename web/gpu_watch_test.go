package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"workbench/models"
	"workbench/orchestrator"
)

// TestNotifyWhenGPUFrees: with every GPU drained, a user watches the GPU
// model; nothing fires while none is free; when an admin frees one the
// user gets exactly one notification, on the API and the page, and no
// more for the same watch however often GPUs come and go.
func TestNotifyWhenGPUFrees(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	alice := tokenFor(t, p, "alice", "user")
	code, body := p.api("GET", "/api/v1/gpus", alice, "")
	if code != 200 {
		t.Fatalf("gpus: %d %v", code, body)
	}
	var uuids []string
	var model string
	for _, g := range body["items"].([]any) {
		gm := g.(map[string]any)
		uuids = append(uuids, gm["uuid"].(string))
		model = gm["model"].(string)
	}
	drain := func(drained bool, list ...string) {
		for _, u := range list {
			if err := p.srv.Store.SetGPUDrained(ctx, u, drained, "admin", "test"); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func() int {
		n, err := p.srv.GPUWatch.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	drain(true, uuids...)

	if code, body := p.api("POST", "/api/v1/gpu-watches", alice, `{"gpu_model":"NVIDIA B200"}`); code != 400 || errCode(body) != "invalid_gpu_model" {
		t.Fatalf("unknown model: %d %v", code, body)
	}
	if code, body := p.api("POST", "/api/v1/gpu-watches", alice, jsonBody(map[string]string{"gpu_model": model})); code != 201 {
		t.Fatalf("watch: %d %v", code, body)
	}
	if code, body := p.api("POST", "/api/v1/gpu-watches", alice, jsonBody(map[string]string{"gpu_model": model})); code != 400 || errCode(body) != "invalid_gpu_model" {
		t.Fatalf("second watch on the same model: %d %v", code, body)
	}
	if n := check(); n != 0 {
		t.Fatalf("fired %d with no GPU free", n)
	}

	drain(false, uuids[3])
	if n := check(); n != 1 {
		t.Fatalf("fired %d when one GPU freed; want 1", n)
	}
	drain(true, uuids[3])
	drain(false, uuids[5])
	if n := check(); n != 0 {
		t.Fatalf("the same watch fired again: %d", n)
	}
	code, body = p.api("GET", "/api/v1/notifications", alice, "")
	items := body["items"].([]any)
	if code != 200 || len(items) != 1 || !strings.Contains(items[0].(map[string]any)["message"].(string), model+" GPU is free now") {
		t.Fatalf("notifications: %d %v", code, body)
	}
	if _, body := p.api("GET", "/api/v1/gpu-watches", alice, ""); body["items"].([]any)[0].(map[string]any)["notified_at"] == nil {
		t.Fatalf("watch not marked notified: %v", body)
	}
	// Bob sees none of it.
	bob := tokenFor(t, p, "bob", "user")
	if _, body := p.api("GET", "/api/v1/notifications", bob, ""); len(body["items"].([]any)) != 0 {
		t.Fatalf("bob's notifications: %v", body)
	}

	// The page shows it unread once, then read.
	c := p.client()
	p.login(c, "alice", "alice-password")
	for i, want := range []string{"true", "false"} {
		res, page := p.get(c, "/notifications")
		doc, _ := goquery.NewDocumentFromReader(strings.NewReader(page))
		n := doc.Find(`[data-testid="notification"]`)
		if unread, _ := n.Attr("data-unread"); res.StatusCode != 200 || n.Length() != 1 || unread != want {
			t.Fatalf("page view %d: %d, %d notifications, unread %q", i, res.StatusCode, n.Length(), unread)
		}
	}
	// A watch made from the page's form.
	drain(true, uuids...)
	if res, page := p.postFormBody(c, "/notifications/watches", map[string][]string{"gpu_model": {model}}); res.StatusCode != 303 {
		t.Fatalf("watch from the page: %d %s", res.StatusCode, page)
	}
	drain(false, uuids[0])
	if n := check(); n != 1 {
		t.Fatalf("the page's watch fired %d times; want 1", n)
	}
}

// The watcher's loop checks when a workbench stops, not only on its timer.
func TestGPUWatcherChecksWhenAWorkbenchStops(t *testing.T) {
	p := newPortal(t)
	ctx, cancel := context.WithCancel(context.Background())
	alice := tokenFor(t, p, "alice", "user")
	_, body := p.api("GET", "/api/v1/gpus", alice, "")
	var model string
	var uuids []string
	for _, g := range body["items"].([]any) {
		gm := g.(map[string]any)
		uuids = append(uuids, gm["uuid"].(string))
		model = gm["model"].(string)
	}
	for _, u := range uuids {
		p.srv.Store.SetGPUDrained(ctx, u, true, "admin", "test")
	}
	if code, body := p.api("POST", "/api/v1/gpu-watches", alice, jsonBody(map[string]string{"gpu_model": model})); code != 201 {
		t.Fatalf("watch: %d %v", code, body)
	}
	done := make(chan struct{})
	go func() { p.srv.GPUWatch.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	p.srv.Store.SetGPUDrained(ctx, uuids[0], false, "admin", "test")
	deadline := time.Now().Add(10 * time.Second) // well under the 15 s timer
	for {
		// Published until seen: the loop may not have subscribed yet.
		p.srv.Manager.Events().Publish(orchestrator.Update{ID: "wb-x", State: models.StateStopped, At: time.Now()})
		if _, body := p.api("GET", "/api/v1/notifications", alice, ""); len(body["items"].([]any)) == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no notification after a workbench stopped")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
