package web_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"workbench/handlers"
	"workbench/web"
)

// On the real engine, preempted through the scheduler: a preempted
// workbench's JSON says what the launch it yielded to asked for
// (preempted_for), in the list and on its own, and so does one that
// auto-resume put back in the queue; a workbench never preempted, one its
// owner starts again (into the queue as much as into a run) and one that
// resumed carry no preempted_for. It was only in the free-text reason.
func TestPreemptedForInTheAPI(t *testing.T) {
	p, _ := enginePortal(t, func(c *web.Config) {
		c.Workbenches.PreemptGrace = time.Second
		c.Workbenches.DrainEvery = 200 * time.Millisecond
	})
	cullRunManager(t, p) // the drainer's timer ends the grace
	ctx := context.Background()
	spot := tokenFor(t, p, "spot", "user")
	eve := tokenFor(t, p, "eve", "user")
	// Two GPUs in the pool: the others drained.
	_, gpus := p.api("GET", "/api/v1/gpus", spot, "")
	for _, g := range gpus["items"].([]any)[2:] {
		if err := p.srv.Store.SetGPUDrained(ctx, g.(map[string]any)["uuid"].(string), true, "admin", "test"); err != nil {
			t.Fatal(err)
		}
	}
	launch := func(token, body string) string {
		t.Helper()
		code, wb := p.api("POST", "/api/v1/workbenches", token, body)
		if code != http.StatusAccepted {
			t.Fatalf("launch %s: %d %v", body, code, wb)
		}
		return wb["id"].(string)
	}
	overnight := launch(spot, `{"name":"overnight","image":"fake","flavor":"1x H100 80GB HBM3","preemptible":true}`)
	nightly := launch(spot, `{"name":"nightly","image":"fake","flavor":"1x H100 80GB HBM3","preemptible":true,"auto_resume":true}`)
	waitState(t, p, spot, overnight, "running")
	waitState(t, p, spot, nightly, "running")
	now := launch(eve, `{"name":"now","image":"fake","flavor":"2x H100 80GB HBM3","queue":true}`)
	waitState(t, p, eve, now, "running") // both yielded their GPU to it
	waitState(t, p, spot, overnight, "preempted")
	waitState(t, p, spot, nightly, "queued")

	const want = "priority interactive, 2 × H100 80GB HBM3 needed, 0 free"
	// preemptedFor reads id's preempted_for from its own JSON and from the
	// list's ("" when absent), both also decoded strictly (no field that
	// APIWorkbench does not declare).
	preemptedFor := func(token, id string) string {
		t.Helper()
		var one handlers.APIWorkbench
		var page handlers.APIPage[handlers.APIWorkbench]
		if code := p.strictAPI("GET", "/api/v1/workbenches/"+id, token, "", &one); code != http.StatusOK {
			t.Fatalf("get %s: %d", id, code)
		}
		if code := p.strictAPI("GET", "/api/v1/workbenches", token, "", &page); code != http.StatusOK {
			t.Fatalf("list: %d", code)
		}
		_, raw := p.api("GET", "/api/v1/workbenches/"+id, token, "")
		got, present := raw["preempted_for"]
		if present && got == "" {
			t.Errorf("%s: preempted_for present and empty; it is left out when there is nothing to say", id)
		}
		_, list := p.api("GET", "/api/v1/workbenches", token, "")
		for _, it := range list["items"].([]any) {
			if wb := it.(map[string]any); wb["id"] == id && wb["preempted_for"] != got {
				t.Errorf("%s: preempted_for %v in the list, %v on its own", id, wb["preempted_for"], got)
			}
		}
		s, _ := got.(string)
		return s
	}
	if got := preemptedFor(spot, overnight); got != want {
		t.Errorf("preempted workbench: preempted_for %q, want %q", got, want)
	}
	if got := preemptedFor(spot, nightly); got != want {
		t.Errorf("preempted workbench queued to resume: preempted_for %q, want %q", got, want)
	}
	if got := preemptedFor(eve, now); got != "" {
		t.Errorf("never-preempted workbench: preempted_for %q", got)
	}

	// Started again by its owner: into the queue (no GPU is free), a new
	// request, no longer the preempted one.
	if code, out := p.api("POST", "/api/v1/workbenches/"+overnight+"/start?queue=true", spot, ""); code != http.StatusOK || out["state"] != "queued" {
		t.Fatalf("start into the queue: %d %v", code, out)
	}
	if got := preemptedFor(spot, overnight); got != "" {
		t.Errorf("started again into the queue: preempted_for %q", got)
	}
	// Both run again once the interactive run stops: the preemption is over.
	if code, out := p.api("POST", "/api/v1/workbenches/"+now+"/stop", eve, ""); code != http.StatusOK {
		t.Fatalf("stop: %d %v", code, out)
	}
	for _, id := range []string{overnight, nightly} {
		waitState(t, p, spot, id, "running")
		if got := preemptedFor(spot, id); got != "" {
			t.Errorf("%s running again: preempted_for %q", id, got)
		}
		// Forgotten, not only hidden by the state: a later stop or
		// requeue must not bring an old preemption back.
		wb, err := p.srv.Store.WorkbenchByID(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if wb.PreemptedFor != "" {
			t.Errorf("%s running again keeps preempted_for %q", id, wb.PreemptedFor)
		}
	}
}
