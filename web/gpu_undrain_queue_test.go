package web_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"workbench/models"
	"workbench/web"
)

// A GPU taken back into service goes to the launch waiting for it at once:
// the queue's periodic look is an hour away here, so only the undrain can
// have placed it (it waited up to the next drain, 5–15 s in a walk-through).
func TestUndrainedGPUGoesToTheQueueAtOnce(t *testing.T) {
	p, _ := enginePortal(t, func(c *web.Config) {
		c.Workbenches.DrainEvery = time.Hour
	})
	bg := context.Background()
	adminTok := tokenFor(t, p, "admin", "admin")
	_, gpus := p.api("GET", "/api/v1/gpus", adminTok, "")
	var all []string
	for _, g := range gpus["items"].([]any) {
		all = append(all, g.(map[string]any)["uuid"].(string))
	}
	admin, _ := p.srv.Store.UserByUsername(bg, "admin")
	fl, err := p.srv.Store.FlavorByNameOrID(bg, "1x H100 80GB HBM3")
	if err != nil {
		t.Fatal(err)
	}
	last := all[len(all)-1]
	p.runningRecord(admin, "all-but-one", models.GPUNeed{Model: fl.GPUModel, Count: len(all) - 1, Candidates: all[:len(all)-1]})
	if code, out := p.api("PUT", "/api/v1/gpus/"+last+"/drain", adminTok, `{"drained":true}`); code != http.StatusOK {
		t.Fatalf("drain: %d %v", code, out)
	}
	lin := tokenFor(t, p, "lin", models.RoleUser)
	code, wb := p.api("POST", "/api/v1/workbenches", lin, `{"name":"waits","image":"fake","flavor":"1x H100 80GB HBM3","queue":true}`)
	if code != http.StatusAccepted || wb["state"] != "queued" {
		t.Fatalf("launch on a full pool: %d %v", code, wb)
	}
	if code, out := p.api("PUT", "/api/v1/gpus/"+last+"/drain", adminTok, `{"drained":false}`); code != http.StatusOK {
		t.Fatalf("undrain: %d %v", code, out)
	}
	got := waitState(t, p, lin, wb["id"].(string), "running")
	if g := got["gpus"].([]any); len(g) != 1 || g[0] != last {
		t.Fatalf("the waiting launch holds %v, want the GPU taken back %s", g, last)
	}
}
