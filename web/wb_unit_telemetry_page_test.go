package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"workbench/handlers"
	"workbench/models"
	"workbench/orchestrator/gpu"
	"workbench/web"
)

// A workbench holding a MIG instance sees the instance's own figures on
// its page and in the telemetry API — its memory, and utilisation "not
// available" (never 0%) while the driver does not answer it per instance,
// then the instance's own utilisation once it does — and how its energy
// share is made; never the whole GPU's figures.
func TestWorkbenchPageShowsItsMIGInstance(t *testing.T) {
	p, h, wb, mi, token := migWorkbenchPortal(t)
	ctx := context.Background()
	c := p.client()
	p.login(c, "alice", "alice-password")
	row := func() (label, util, mem, share string) {
		t.Helper()
		_, body := p.get(c, "/workbenches/"+wb.ID)
		r := mpDoc(t, body).Find(`[data-testid="wb-gpu-telemetry-row"]`)
		if r.Length() != 1 {
			t.Fatalf("%d GPU telemetry rows, want 1 (its MIG instance)", r.Length())
		}
		return strings.TrimSpace(r.Find(`[data-testid="wb-gpu-unit"]`).Text()), strings.TrimSpace(r.Find(`[data-testid="wb-gpu-util"]`).Text()),
			strings.TrimSpace(r.Find(`[data-testid="wb-gpu-mem"]`).Text()), strings.TrimSpace(r.Find(`[data-testid="wb-gpu-energy-share"]`).Text())
	}
	label, util, mem, share := row()
	if label != "MIG instance 1g.10gb" || util != "not available for a MIG instance" || mem != "2.0 / 10.0 GiB" ||
		!strings.Contains(share, "by compute slices of the GPU's MIG instances") {
		t.Errorf("row: %q %q %q %q", label, util, mem, share)
	}
	var tel handlers.APIWorkbenchTelemetry
	p.strictAPI("GET", "/api/v1/workbenches/"+wb.ID+"/telemetry", token, "", &tel)
	if len(tel.Units) != 1 || tel.Units[0].Latest == nil || tel.Units[0].Latest.UtilPercent != nil ||
		!telHas(tel.Units[0].Latest.NotAvailable, "gpu_percent") || tel.Units[0].EnergyShareBasis != "mig_slices" ||
		tel.Units[0].GPUInstanceID == nil || *tel.Units[0].Latest.MemUsedMiB != 2048 {
		t.Errorf("telemetry %+v", tel.Units)
	}

	h.SetUtil(mi.UUID, 30, 4)
	if err := p.srv.SampleGPUs(ctx); err != nil {
		t.Fatal(err)
	}
	if _, util, _, _ := row(); util != "30%" {
		t.Errorf("utilisation %q once the driver answers it per instance, want 30%%", util)
	}
}

// The same in a browser, with JavaScript on and off: alice signs in, opens
// her workbench, reads her MIG instance's row, and after the driver starts
// answering per-instance utilisation reloads the page and reads it.
func TestWorkbenchMIGTelemetryInTheBrowser(t *testing.T) {
	for _, js := range []bool{true, false} {
		t.Run(jsName(js), func(t *testing.T) {
			p, h, wb, mi, _ := migWorkbenchPortal(t)
			ctx := btNewBrowser(t)
			if !js {
				btDo(t, ctx, "disable JavaScript", btScriptsOff())
			}
			btNavigate(t, ctx, p.ts.URL+"/login")
			if resp := btLogin(t, ctx, "alice", "alice-password"); resp.Status != http.StatusOK {
				t.Fatalf("login: %d", resp.Status)
			}
			btNavigate(t, ctx, p.ts.URL+"/workbenches/"+wb.ID)
			btDo(t, ctx, "wait for the GPU use card", chromedp.WaitVisible(chromedp.CSS(`[data-testid=wb-gpu-telemetry-row]`)))
			if got := btText(t, ctx, `[data-testid=wb-gpu-unit]`); got != "MIG instance 1g.10gb" {
				t.Errorf("unit %q", got)
			}
			if got := btText(t, ctx, `[data-testid=wb-gpu-util]`); got != "not available for a MIG instance" {
				t.Errorf("utilisation %q, want not available (never 0%%)", got)
			}
			if got := btText(t, ctx, `[data-testid=wb-gpu-mem]`); got != "2.0 / 10.0 GiB" {
				t.Errorf("memory %q", got)
			}
			h.SetUtil(mi.UUID, 30, 4)
			if err := p.srv.SampleGPUs(context.Background()); err != nil {
				t.Fatal(err)
			}
			btNavigate(t, ctx, p.ts.URL+"/workbenches/"+wb.ID)
			btDo(t, ctx, "wait for the GPU use card", chromedp.WaitVisible(chromedp.CSS(`[data-testid=wb-gpu-telemetry-row]`)))
			if got := btText(t, ctx, `[data-testid=wb-gpu-util]`); got != "30%" {
				t.Errorf("utilisation after reload %q, want 30%%", got)
			}
			btScreenshot(t, ctx, "workbench-mig-telemetry-"+jsName(js)+".png")
		})
	}
}

// migWorkbenchPortal serves a simulated DGX H100 whose GPU 7 is split into
// two 1g.10gb MIG instances handed out through MIG device handles, with
// alice's running workbench on the first instance (2 GiB in use), sampled
// once.
func migWorkbenchPortal(t *testing.T) (*testPortal, *gpu.MockMIGHandles, *models.Workbench, gpu.MIGInstance, string) {
	t.Helper()
	lib, _, err := gpu.NewLiveMock("dgxh100")
	if err != nil {
		t.Fatal(err)
	}
	if err := gpu.PartitionMock(lib, []gpu.MockMIGPart{{Index: 7, Profiles: []string{"1g.10gb", "1g.10gb"}}}); err != nil {
		t.Fatal(err)
	}
	h := gpu.NewMockMIGHandles(lib)
	p := newPortal(t, func(c *web.Config) {
		c.GPUOptions = []gpu.Option{gpu.WithNVML(h, true, "mock:dgxh100")}
	})
	ctx := context.Background()
	token := tokenFor(t, p, "alice", "user")
	alice, _ := p.srv.Store.UserByUsername(ctx, "alice")
	var gpus handlers.APIGPUList
	p.strictAPI("GET", "/api/v1/gpus", token, "", &gpus)
	g7 := gpus.Items[7]
	if len(g7.MIG) != 2 {
		t.Fatalf("GPU 7's MIG instances: %+v", g7.MIG)
	}
	mi := g7.MIG[0]
	wb := &models.Workbench{Name: "small", OwnerID: alice.ID, ImageID: 1, FlavorID: 1}
	need := models.GPUNeed{Kind: models.UnitMIG, Model: g7.Model, Profile: mi.Profile, Count: 1,
		Candidates: []string{mi.UUID}, Parents: map[string]string{mi.UUID: g7.UUID}}
	if err := p.srv.Store.CreateWorkbench(ctx, wb, need, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.SetWorkbenchState(ctx, wb.ID, models.StateRunning, 100, "",
		map[string]any{"started_at": time.Now().UTC().Add(-5 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	h.SetMemUsed(mi.UUID, 2048)
	if err := p.srv.SampleGPUs(ctx); err != nil {
		t.Fatal(err)
	}
	return p, h, wb, mi, token
}

func telHas(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// The workbench page names the GPUs a workbench holds as the pool page
// does ("GPU 3 · H100 80GB HBM3"), with the UUID beside it for machines:
// a whole GPU in its GPUs and its GPU-use row, a MIG instance by the GPU
// it is part of.
func TestWorkbenchPageNamesItsGPUs(t *testing.T) {
	p, _, migWB, _, token := migWorkbenchPortal(t)
	ctx := context.Background()
	var gpus handlers.APIGPUList
	p.strictAPI("GET", "/api/v1/gpus", token, "", &gpus)
	g3 := gpus.Items[3]
	alice, _ := p.srv.Store.UserByUsername(ctx, "alice")
	whole := p.runningRecord(alice, "whole", models.GPUNeed{Kind: models.UnitGPU, Model: g3.Model, Count: 1, Candidates: []string{g3.UUID}})
	c := p.client()
	p.login(c, "alice", "alice-password")

	_, body := p.get(c, "/workbenches/"+whole.ID)
	doc := mpDoc(t, body)
	gpu := doc.Find(`[data-testid=wb-gpu]`)
	if gpu.Length() != 1 || strings.TrimSpace(gpu.Find(`[data-testid=wb-gpu-name]`).Text()) != "GPU 3 · H100 80GB HBM3" ||
		strings.TrimSpace(gpu.Find(`code`).Text()) != g3.UUID {
		t.Errorf("GPUs of a one-GPU workbench: %q, want GPU 3 named with its UUID %s", strings.TrimSpace(gpu.Text()), g3.UUID)
	}
	if got := strings.TrimSpace(doc.Find(`[data-testid=wb-gpu-telemetry-row] [data-testid=wb-gpu-telemetry-name]`).Text()); got != "GPU 3 · H100 80GB HBM3" {
		t.Errorf("GPU-use row names %q, want GPU 3", got)
	}

	_, body = p.get(c, "/workbenches/"+migWB.ID)
	doc = mpDoc(t, body)
	if got := strings.TrimSpace(doc.Find(`[data-testid=wb-unit][data-kind=mig] [data-testid=wb-unit-gpu]`).Text()); got != "GPU 7 · H100 80GB HBM3" {
		t.Errorf("MIG instance listed on %q, want GPU 7", got)
	}
	if got := strings.TrimSpace(doc.Find(`[data-testid=wb-gpu-telemetry-row] [data-testid=wb-gpu-telemetry-name]`).Text()); got != "GPU 7 · H100 80GB HBM3" {
		t.Errorf("MIG instance's GPU-use row names %q, want GPU 7", got)
	}
}
