package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
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

	// A model and a flavor at once: one watch is of one or the other (the
	// model was silently dropped).
	if code, body := p.api("POST", "/api/v1/gpu-watches", alice, jsonBody(map[string]string{"gpu_model": model, "flavor": "1x H100 80GB HBM3"})); code != 400 || errCode(body) != "invalid_flavor" {
		t.Errorf("a watch of a model and a flavor: %d %v, want 400 invalid_flavor", code, body)
	}
	if code, body := p.api("POST", "/api/v1/gpu-watches", alice, `{"gpu_model":"NVIDIA B200"}`); code != 400 || errCode(body) != "invalid_gpu_model" {
		t.Fatalf("unknown model: %d %v", code, body)
	}
	if code, body := p.api("POST", "/api/v1/gpu-watches", alice, jsonBody(map[string]string{"gpu_model": model})); code != 201 {
		t.Fatalf("watch: %d %v", code, body)
	}
	if code, body := p.api("POST", "/api/v1/gpu-watches", alice, jsonBody(map[string]string{"gpu_model": model})); code != 409 || errCode(body) != "conflict" {
		t.Fatalf("second watch on the same model: %d %v", code, body)
	}
	if n := check(); n != 0 {
		t.Fatalf("fired %d with no GPU free", n)
	}

	// A disabled account's watch waits: nobody to tell.
	aliceUser, _ := p.srv.Store.UserByUsername(ctx, "alice")
	if err := p.srv.Store.SetUserDisabled(ctx, aliceUser.ID, true); err != nil {
		t.Fatal(err)
	}
	drain(false, uuids[3])
	if n := check(); n != 0 {
		t.Fatalf("fired %d for a disabled account", n)
	}
	if err := p.srv.Store.SetUserDisabled(ctx, aliceUser.ID, false); err != nil {
		t.Fatal(err)
	}
	alice = tokenFor(t, p, "alice", "user") // disabling ended her tokens
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
	if code != 200 || len(items) != 1 || !strings.Contains(items[0].(map[string]any)["message"].(string), "A GPU of model "+model+" is free now") {
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

	// The page shows it unread once, then read. Until then every page's
	// top bar counts it (bob's none), so alice learns of it from any page.
	c := p.client()
	p.login(c, "alice", "alice-password")
	unreadOn := func(c *http.Client, path string) string {
		t.Helper()
		_, page := p.get(c, path)
		doc, _ := goquery.NewDocumentFromReader(strings.NewReader(page))
		if doc.Find(`[data-testid=notifications-link][href="/notifications"]`).Length() != 1 {
			t.Fatalf("%s has no link to the notifications", path)
		}
		return strings.TrimSpace(doc.Find(`[data-testid=notifications-unread]`).Text())
	}
	for _, path := range []string{"/", "/gpus", "/usage"} {
		if got := unreadOn(c, path); got != "1" {
			t.Errorf("alice's unread count on %s: %q, want 1", path, got)
		}
	}
	bc := p.client()
	p.login(bc, "bob", "bob-password")
	if got := unreadOn(bc, "/"); got != "" {
		t.Errorf("bob's unread count %q, want none", got)
	}
	for i, want := range []string{"true", "false"} {
		res, page := p.get(c, "/notifications")
		doc, _ := goquery.NewDocumentFromReader(strings.NewReader(page))
		n := doc.Find(`[data-testid="notification"]`)
		if unread, _ := n.Attr("data-unread"); res.StatusCode != 200 || n.Length() != 1 || unread != want {
			t.Fatalf("page view %d: %d, %d notifications, unread %q", i, res.StatusCode, n.Length(), unread)
		}
	}
	if got := unreadOn(c, "/"); got != "" {
		t.Errorf("unread count %q after the notifications page was seen", got)
	}
	// A Chinese reader gets the message in Chinese (it is stored in
	// English, the API's language, and translated on the page).
	zh := p.client()
	zh.Transport = acceptLanguage{"zh-CN,zh;q=0.9", http.DefaultTransport}
	p.login(zh, "alice", "alice-password")
	_, zhPage := p.get(zh, "/notifications")
	zhDoc, _ := goquery.NewDocumentFromReader(strings.NewReader(zhPage))
	if msg := zhDoc.Find(`[data-testid="notification"]`).Text(); !strings.Contains(msg, "现在有空闲的 "+model+" GPU") {
		t.Fatalf("notification for a Chinese reader: %q", msg)
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

// TestNotifyWhenFlavorCanStart: a watch on the 2-GPU flavor (API and the
// notifications page's form) fires only once two GPUs of its model are
// free, once, linking to the launch form with the flavor chosen; a flavor
// without GPUs cannot be watched; the page lists the watch with its flavor.
func TestNotifyWhenFlavorCanStart(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	alice := tokenFor(t, p, "alice", "user")
	_, body := p.api("GET", "/api/v1/gpus", alice, "")
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
	duo := "2x " + models.ShortGPUName(model)

	for _, bad := range []string{"CPU small", "no such flavor"} {
		if code, body := p.api("POST", "/api/v1/gpu-watches", alice, jsonBody(map[string]string{"flavor": bad})); code != 400 || errCode(body) != "invalid_flavor" {
			t.Fatalf("watch on %q: %d %v", bad, code, body)
		}
	}
	// A flavor asking more GPUs than the server has could never start,
	// so its watch could never fire: refused, and not offered.
	huge := &models.Flavor{Name: "16x all", GPUModel: model, GPUCount: 16, CPUMilli: 1000, MemoryMiB: 1024, ShmMiB: 64, Enabled: true}
	if err := p.srv.Store.CreateFlavor(ctx, huge); err != nil {
		t.Fatal(err)
	}
	if code, body := p.api("POST", "/api/v1/gpu-watches", alice, jsonBody(map[string]string{"flavor": huge.Name})); code != 400 || errCode(body) != "invalid_flavor" ||
		!strings.Contains(fmt.Sprint(body), "could never start") {
		t.Fatalf("watch on a flavor that never fits: %d %v", code, body)
	}
	ac := p.client()
	p.login(ac, "alice", "alice-password")
	if _, page := p.get(ac, "/notifications"); strings.Contains(page, huge.Name) || !strings.Contains(page, duo) {
		t.Errorf("the notifications page offers %q (or lacks %q)", huge.Name, duo)
	}
	code, body := p.api("POST", "/api/v1/gpu-watches", alice, jsonBody(map[string]string{"flavor": duo}))
	item, _ := body["item"].(map[string]any)
	if code != 201 || item["flavor"] != duo || item["flavor_id"] == nil || item["gpu_model"] != model {
		t.Fatalf("flavor watch: %d %v", code, body)
	}
	if code, body := p.api("POST", "/api/v1/gpu-watches", alice, jsonBody(map[string]string{"flavor": duo})); code != 409 || errCode(body) != "conflict" {
		t.Fatalf("second watch on the same flavor: %d %v", code, body)
	}

	drain(false, uuids[2])
	if n := check(); n != 0 {
		t.Fatalf("one free GPU fired %d watches of a 2-GPU flavor", n)
	}
	drain(false, uuids[6])
	if n := check(); n != 1 {
		t.Fatalf("two free GPUs fired %d watches; want 1", n)
	}
	if n := check(); n != 0 {
		t.Fatalf("the flavor watch fired again: %d", n)
	}
	_, body = p.api("GET", "/api/v1/notifications", alice, "")
	items := body["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("notifications: %v", body)
	}
	note := items[0].(map[string]any)
	if !strings.Contains(note["message"].(string), "Flavor "+duo+" can start now") || note["link"] != "/workbenches/new?flavor="+url.QueryEscape(duo) {
		t.Fatalf("notification: %v", note)
	}

	// The page: a form per kind of watch, the flavor in the list, errors
	// shown on the form.
	drain(true, uuids...)
	c := p.client()
	p.login(c, "alice", "alice-password")
	res, page := p.postFormBody(c, "/notifications/watches", url.Values{"flavor": {"CPU small"}})
	doc, _ := goquery.NewDocumentFromReader(strings.NewReader(page))
	if res.StatusCode != 400 || !strings.Contains(doc.Find(`[data-testid="flavor-watch-form"]`).Text(), "choose an enabled flavor with GPUs") {
		t.Fatalf("page watch on a CPU flavor: %d", res.StatusCode)
	}
	quad := "4x " + models.ShortGPUName(model)
	if res, page := p.postFormBody(c, "/notifications/watches", url.Values{"flavor": {quad}}); res.StatusCode != 303 {
		t.Fatalf("flavor watch from the page: %d %s", res.StatusCode, page)
	}
	_, page = p.get(c, "/notifications")
	doc, _ = goquery.NewDocumentFromReader(strings.NewReader(page))
	var flavors []string
	doc.Find(`[data-testid="gpu-watch-flavor"]`).Each(func(_ int, s *goquery.Selection) { flavors = append(flavors, strings.TrimSpace(s.Text())) })
	if len(flavors) != 2 || flavors[0] != quad || flavors[1] != duo {
		t.Fatalf("watches listed with flavors %q", flavors)
	}
	if doc.Find(`[data-testid="flavor-watch-flavor"] option[value="CPU small"]`).Length() != 0 ||
		doc.Find(`[data-testid="flavor-watch-flavor"] option[value="`+duo+`"]`).Length() != 1 {
		t.Fatal("the flavor form offers CPU flavors, or lacks the GPU ones")
	}
	drain(false, uuids[:3]...)
	if n := check(); n != 0 {
		t.Fatalf("three free GPUs fired %d watches of a 4-GPU flavor", n)
	}
	drain(false, uuids[3])
	if n := check(); n != 1 {
		t.Fatalf("four free GPUs fired %d watches; want 1", n)
	}
}
