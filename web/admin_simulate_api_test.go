package web_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"workbench/handlers"
	"workbench/models"
)

// "Replay the last 30 days under another policy" through the admin API:
// the runs metered in the portal's own SQLite file, replayed in the portal
// engine with a GPU split into MIG instances, answered as the policy table
// (decoded strictly); users cannot; bad parameters are refused by name.
func TestAdminSimulateAPI(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	admin := tokenFor(t, p, "root", "admin")
	alice := tokenFor(t, p, "alice", "user")
	st := p.srv.Store
	u, err := st.UserByUsername(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	imgs, err := st.ListImages(ctx, true)
	if err != nil || len(imgs) == 0 {
		t.Fatalf("images: %v", err)
	}
	var gpus handlers.APIGPUList
	if code := p.strictAPI("GET", "/api/v1/gpus", admin, "", &gpus); code != 200 {
		t.Fatalf("gpus: %d", code)
	}
	model := gpus.Items[0].Model
	fl := &models.Flavor{Name: "sim-one", GPUModel: model, GPUCount: 1, CPUMilli: 1000, MemoryMiB: 1024, Enabled: true}
	if err := st.CreateFlavor(ctx, fl); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	for i := range 3 {
		wb := &models.Workbench{Name: "past-" + string(rune('a'+i)), OwnerID: u.ID, ImageID: imgs[0].ID, FlavorID: fl.ID, Token: "t"}
		if err := st.EnqueueWorkbench(ctx, wb, nil); err != nil {
			t.Fatal(err)
		}
		start := now.Add(-time.Duration(48+i) * time.Hour)
		if err := st.OpenInterval(ctx, &models.UsageInterval{WorkbenchID: wb.ID, UserID: u.ID, GPUModel: model, GPUCount: 1, UnitKind: models.UnitGPU,
			CPUMilli: 1000, MemoryMiB: 1024, StartedAt: start}); err != nil {
			t.Fatal(err)
		}
		if err := st.CloseInterval(ctx, wb.ID, start.Add(2*time.Hour), "stopped"); err != nil {
			t.Fatal(err)
		}
		if err := st.LeaveQueue(ctx, wb.ID, models.StateStopped, "test"); err != nil {
			t.Fatal(err)
		}
	}
	if code, _ := p.api("GET", "/api/v1/admin/simulate", alice, ""); code != http.StatusForbidden {
		t.Fatalf("a user replayed: %d", code)
	}
	var sim handlers.APISimulation
	code := p.strictAPI("GET", "/api/v1/admin/simulate?days=30&policy=queue-fair&policy=fair%2Bpreempt%2Bsharing&mig=0:3g.40gb", admin, "", &sim)
	if code != 200 || sim.Jobs != 3 || sim.Model != model || sim.GPUs != 8 || sim.Engine != "portal" || len(sim.Rows) != 2 ||
		sim.Rows[0].Policy != "queue-fair" || sim.Rows[1].Policy != "fair+preempt+sharing" || len(sim.MIG) != 1 {
		t.Fatalf("replay: %d %+v", code, sim)
	}
	for _, r := range sim.Rows {
		// Three 2 h runs, one at a time: 6 GPU-hours busy, nobody waits.
		if r.BusyGPUHours != 6 || r.Rejected != 0 || r.Unfinished != 0 || r.Waits["interactive"].Jobs != 3 || r.Waits["interactive"].P95Seconds != 0 ||
			r.CostMicros["alice"] <= 0 {
			t.Fatalf("%s: %+v", r.Policy, r)
		}
	}
	// Not asked, the layout is the server's own: no GPU shared here, then
	// one shared in 2 slices (it described 3 GPUs × 4 slices regardless).
	if code := p.strictAPI("GET", "/api/v1/admin/simulate?days=30&policy=queue-fair", admin, "", &sim); code != 200 || sim.SharedGPUs != 0 || len(sim.MIG) != 0 {
		t.Fatalf("replay of this server: %d shared %d × %d, mig %v", code, sim.SharedGPUs, sim.Slices, sim.MIG)
	}
	if code, body := p.api("PUT", "/api/v1/gpus/"+gpus.Items[6].UUID+"/shared", admin, `{"slices": 2}`); code != 200 {
		t.Fatalf("share a GPU: %d %v", code, body)
	}
	if code := p.strictAPI("GET", "/api/v1/admin/simulate?days=30&policy=queue-fair", admin, "", &sim); code != 200 || sim.SharedGPUs != 1 || sim.Slices != 2 {
		t.Fatalf("replay with a shared GPU: %d shared %d × %d, want 1 × 2", code, sim.SharedGPUs, sim.Slices)
	}
	if code := p.strictAPI("GET", "/api/v1/admin/simulate?days=30&policy=queue-fair&shared_gpus=3&slices=4", admin, "", &sim); code != 200 || sim.SharedGPUs != 3 || sim.Slices != 4 {
		t.Fatalf("what if 3 × 4: %d shared %d × %d", code, sim.SharedGPUs, sim.Slices)
	}
	for q, field := range map[string]string{"days=0": "days", "policy=lottery": "policy", "mig=0:9g.1gb": "mig", "engine=x": "engine", "gpus=9": "gpus"} {
		if code, body := p.api("GET", "/api/v1/admin/simulate?"+q, admin, ""); code != http.StatusBadRequest || errCode(body) != "invalid_"+field {
			t.Errorf("%s: %d %v", q, code, body)
		}
	}
}
