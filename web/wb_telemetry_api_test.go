package web_test

import (
	"context"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"

	"workbench/handlers"
	"workbench/models"
	"workbench/orchestrator/gpu"
	"workbench/web"
)

// GET /api/v1/workbenches/{id}/telemetry on a mock GPU with life: the
// holder sees its GPU's latest reading, a per-minute series, and energy
// "not available" (null) where the GPU's energy counter cannot be read —
// never 0; someone else's workbench is not found. The admin utilisation
// JSON decodes strictly and is refused to users.
func TestWorkbenchTelemetryAPI(t *testing.T) {
	srv := dgxh100.New()
	load := gpu.AttachMockLoad(srv)
	p := newPortal(t, func(c *web.Config) {
		c.GPUOptions = []gpu.Option{gpu.WithNVML(srv, true, "mock:dgxh100")}
	})
	ctx := context.Background()
	user := tokenFor(t, p, "alice", "user")
	other := tokenFor(t, p, "bob", "user")
	admin := tokenFor(t, p, "root", "admin")
	alice, _ := p.srv.Store.UserByUsername(ctx, "alice")
	var gpus handlers.APIGPUList
	p.strictAPI("GET", "/api/v1/gpus", user, "", &gpus)
	g0 := gpus.Items[0]
	wb := &models.Workbench{Name: "train", OwnerID: alice.ID, ImageID: 1, FlavorID: 1}
	if err := p.srv.Store.CreateWorkbench(ctx, wb, models.GPUNeed{Model: g0.Model, Count: 1, Candidates: []string{g0.UUID}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.SetWorkbenchState(ctx, wb.ID, models.StateRunning, 100, "",
		map[string]any{"started_at": time.Now().UTC().Add(-10 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	load.Set(0, gpu.MockGPULoad{UtilPercent: 42, MemUtilPercent: 7, PowerMilliW: 300_000, TempC: 50, EnergyUnread: true})
	for range 2 {
		if err := p.srv.SampleGPUs(ctx); err != nil {
			t.Fatal(err)
		}
	}

	var tel handlers.APIWorkbenchTelemetry
	if code := p.strictAPI("GET", "/api/v1/workbenches/"+wb.ID+"/telemetry", user, "", &tel); code != 200 {
		t.Fatalf("telemetry: %d", code)
	}
	if len(tel.Units) != 1 || tel.Units[0].Kind != "gpu" || tel.Units[0].UUID != g0.UUID || tel.Units[0].Latest == nil {
		t.Fatalf("units %+v", tel.Units)
	}
	l := tel.Units[0].Latest
	if l.UtilPercent == nil || *l.UtilPercent != 42 || l.PowerW == nil || *l.PowerW != 300 || l.TemperatureC == nil || *l.TemperatureC != 50 {
		t.Errorf("latest %+v", l)
	}
	if len(tel.Units[0].Series) < 10 || len(tel.Units[0].Series) > 12 {
		t.Errorf("series of %d minutes, want the 11 since the run started", len(tel.Units[0].Series))
	}
	busy := 0
	for _, pt := range tel.Units[0].Series {
		if pt.UtilPercent != nil && *pt.UtilPercent == 42 {
			busy++
		}
		if pt.EnergyMJ != nil {
			t.Errorf("minute %v has energy %d though the counter cannot be read", pt.Minute, *pt.EnergyMJ)
		}
	}
	if busy == 0 {
		t.Errorf("no minute of the series shows the 42%% read: %+v", tel.Units[0].Series)
	}
	if tel.Energy.RunMJ != nil || tel.Energy.TotalMJ != nil || tel.Energy.RunCostMicros != nil {
		t.Errorf("energy %+v, want not available (null) with an unreadable counter", tel.Energy)
	}
	if code := p.strictAPI("GET", "/api/v1/workbenches/"+wb.ID+"/telemetry", other, "", nil); code != 404 {
		t.Errorf("another user's telemetry request: %d, want 404", code)
	}

	var ut handlers.APIUtilisation
	if code := p.strictAPI("GET", "/api/v1/admin/utilisation?bucket=week", admin, "", &ut); code != 200 || ut.Bucket != "week" || ut.IdleThresholdPercent != 5 {
		t.Errorf("admin utilisation: %d %+v", code, ut)
	}
	// The dashboard data lists the running workbench with its sparkline.
	if len(ut.RunningWorkbenches) != 1 || ut.RunningWorkbenches[0].ID != wb.ID || ut.RunningWorkbenches[0].User != "alice" ||
		len(ut.RunningWorkbenches[0].Units) != 1 || len(ut.RunningWorkbenches[0].Units[0].Series) < len(tel.Units[0].Series) {
		t.Errorf("running workbenches %+v", ut.RunningWorkbenches)
	}
	if code := p.strictAPI("GET", "/api/v1/admin/utilisation", user, "", nil); code != 403 {
		t.Errorf("a user asked for the utilisation report: %d, want 403", code)
	}
	if code := p.strictAPI("GET", "/api/v1/admin/utilisation?bucket=year", admin, "", nil); code != 400 {
		t.Errorf("bucket=year: %d, want 400", code)
	}
}
