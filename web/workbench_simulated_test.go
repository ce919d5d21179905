package web_test

import (
	"context"
	"net/http"
	"testing"

	"workbench/models"
	"workbench/web"
)

// On a simulated pool every workbench says "simulated": true in the API,
// whatever its state: a stopped one holds no GPU any more, and it read
// false, as if its runs had been on real GPUs. A real pool's say false.
func TestWorkbenchSimulatedWhateverItsState(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tok := tokenFor(t, p, "alice", "user")
	alice, _ := p.srv.Store.UserByUsername(ctx, "alice")
	_, gpus := p.api("GET", "/api/v1/gpus", tok, "")
	uuid := gpus["items"].([]any)[0].(map[string]any)["uuid"].(string)
	fl, err := p.srv.Store.FlavorByNameOrID(ctx, "1x H100 80GB HBM3")
	if err != nil {
		t.Fatal(err)
	}
	wb := p.runningRecord(alice, "sim", models.GPUNeed{Model: fl.GPUModel, Count: 1, Candidates: []string{uuid}})
	if code, got := p.api("GET", "/api/v1/workbenches/"+wb.ID, tok, ""); code != http.StatusOK || got["simulated"] != true || got["state"] != models.StateRunning {
		t.Fatalf("running: %d %v", code, got)
	}
	code, got := p.api("POST", "/api/v1/workbenches/"+wb.ID+"/stop", tok, "")
	if code != http.StatusOK || got["state"] != models.StateStopped || got["simulated"] != true {
		t.Fatalf("the stop's answer: %d state %v simulated %v, want stopped and simulated", code, got["state"], got["simulated"])
	}
	if code, got := p.api("GET", "/api/v1/workbenches/"+wb.ID, tok, ""); code != http.StatusOK || got["simulated"] != true {
		t.Fatalf("stopped: %d simulated %v", code, got["simulated"])
	}
	_, list := p.api("GET", "/api/v1/workbenches", tok, "")
	if items := list["items"].([]any); len(items) != 1 || items[0].(map[string]any)["simulated"] != true {
		t.Fatalf("the list: %v", list)
	}

	real := newPortal(t, func(c *web.Config) { c.GPUs = "none" })
	rtok := tokenFor(t, real, "bob", "user")
	bob, _ := real.srv.Store.UserByUsername(ctx, "bob")
	rwb := real.runningRecord(bob, "cpu", models.GPUNeed{})
	if code, got := real.api("GET", "/api/v1/workbenches/"+rwb.ID, rtok, ""); code != http.StatusOK || got["simulated"] != false {
		t.Fatalf("on a pool of no simulated GPUs: %d simulated %v", code, got["simulated"])
	}
}
