package web_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"workbench/handlers"
)

// Reorder to any position through the API: admins only (sudo), decoded
// strictly, audited, a running or unknown workbench refused with a code;
// the positions follow at once.
func TestQueueMoveAPI(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	admin := tokenFor(t, p, "root", "admin")
	alice := tokenFor(t, p, "alice", "user")
	var gpus handlers.APIGPUList
	if code := p.strictAPI("GET", "/api/v1/gpus", admin, "", &gpus); code != 200 {
		t.Fatalf("gpus: %d", code)
	}
	for _, g := range gpus.Items { // nothing free: every launch waits
		if code, out := p.api("PUT", "/api/v1/gpus/"+g.UUID+"/drain", admin, `{"drained":true}`); code != 200 {
			t.Fatalf("drain: %d %v", code, out)
		}
	}
	imgs, err := p.srv.Store.ListImages(ctx, true)
	if err != nil || len(imgs) == 0 {
		t.Fatalf("images: %v", err)
	}
	fls, err := p.srv.Store.ListFlavors(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	flavor := ""
	for _, f := range fls {
		if f.GPUCount == 1 && (f.UnitKind == "" || f.UnitKind == "gpu") {
			flavor = f.Name
		}
	}
	var ids []string
	for i := range 3 {
		var wb handlers.APIWorkbench
		body := fmt.Sprintf(`{"name": "w%d", "image": %q, "flavor": %q, "queue": true}`, i, imgs[0].Name, flavor)
		if code := p.strictAPI("POST", "/api/v1/workbenches", alice, body, &wb); code != http.StatusAccepted || wb.State != "queued" {
			t.Fatalf("launch %d: %d %+v", i, code, wb)
		}
		ids = append(ids, wb.ID)
	}
	if code, _ := p.api("POST", "/api/v1/admin/queue/"+ids[2]+"/move", alice, `{"position": 1}`); code != http.StatusForbidden {
		t.Fatalf("a user reordered: %d", code)
	}
	var mv handlers.APIQueueMove
	if code := p.strictAPI("POST", "/api/v1/admin/queue/"+ids[2]+"/move", admin, `{"position": 1}`, &mv); code != 200 ||
		mv.Position != 1 || mv.QueuePosition != 1 || mv.State != "queued" {
		t.Fatalf("move: %d %+v", code, mv)
	}
	var wb handlers.APIWorkbench
	if code := p.strictAPI("GET", "/api/v1/workbenches/"+ids[0], alice, "", &wb); code != 200 || wb.QueuePosition != 2 {
		t.Fatalf("the first launch after the move: %d position %d", code, wb.QueuePosition)
	}
	if code, body := p.api("POST", "/api/v1/admin/queue/"+ids[0]+"/move", admin, `{"position": 0}`); code != http.StatusBadRequest || errCode(body) != "invalid_position" {
		t.Fatalf("position 0: %d %v", code, body)
	}
	if code, _ := p.api("POST", "/api/v1/admin/queue/nope/move", admin, `{"position": 1}`); code != http.StatusNotFound {
		t.Fatalf("unknown workbench: %d", code)
	}
	if code, _ := p.api("POST", "/api/v1/workbenches/"+ids[1]+"/stop", alice, ""); code != 200 {
		t.Fatalf("cancel: %d", code)
	}
	if code, body := p.api("POST", "/api/v1/admin/queue/"+ids[1]+"/move", admin, `{"position": 1}`); code != http.StatusConflict || errCode(body) != "not_queued" {
		t.Fatalf("move a cancelled launch: %d %v", code, body)
	}
	audit, err := p.srv.Store.ListAudit(ctx, 50)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range audit {
		if a.Action == "queue.move" && a.Target == ids[2] && a.Actor == "root" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d queue.move audit entries", n)
	}
}
