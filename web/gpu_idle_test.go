package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/PuerkitoBio/goquery"

	"workbench/models"
	"workbench/orchestrator/gpu"
	"workbench/web"
)

// TestGPUIdleReleaseWarnsThenStops: a workbench whose GPU reads 0% shows
// "GPU idle for 42 min — stops at …" on its page (manager clock moved on),
// is then stopped by the culler with reason "GPU idle" although proxy
// traffic keeps it active, and the culls counter says gpu_idle.
func TestGPUIdleReleaseWarnsThenStops(t *testing.T) {
	srv := dgxh100.New()
	load := gpu.AttachMockLoad(srv) // every GPU: readable 0%
	p, _ := enginePortal(t, cullTimers, func(c *web.Config) {
		c.GPUOptions = []gpu.Option{gpu.WithNVML(srv, true, "mock:dgxh100")}
	})
	ctx := context.Background()
	devs, err := p.srv.Store.ListFlavors(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	model := ""
	for _, f := range devs {
		if f.GPUCount == 1 {
			model = f.GPUModel
		}
	}
	fl := &models.Flavor{Name: "H100 GPU-idle hour", GPUModel: model, GPUCount: 1, CPUMilli: 1000, MemoryMiB: 1 * 1024, ShmMiB: 64,
		GPUIdleTimeoutS: 3600, Enabled: true}
	if err := p.srv.Store.CreateFlavor(ctx, fl); err != nil {
		t.Fatal(err)
	}
	alice := tokenFor(t, p, "alice", "user")
	ac := p.client()
	p.login(ac, "alice", "alice-password")
	id := cullLaunch(t, p, alice, "gpu-idle", fl.Name, 4*3600)
	waitState(t, p, alice, id, "running")
	if err := p.srv.SampleGPUs(ctx); err != nil {
		t.Fatal(err)
	}
	banner := func() (string, bool) {
		t.Helper()
		res, body := p.get(ac, "/workbenches/"+id)
		if res.StatusCode != 200 {
			t.Fatalf("workbench page: %d", res.StatusCode)
		}
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		s := doc.Find(`[data-testid="wb-gpu-idle"]`)
		_, warn := s.Attr("data-warn")
		return strings.TrimSpace(s.Text()), warn
	}
	if text, warn := banner(); !strings.Contains(text, "GPU idle for") || warn {
		t.Fatalf("fresh idle workbench: %q warn=%v, want a quiet GPU idle line", text, warn)
	}
	// One GPU reading that fails: not idle, whatever the clock says.
	for i := range 8 {
		load.Set(i, gpu.MockGPULoad{Fail: true})
	}
	if err := p.srv.SampleGPUs(ctx); err != nil {
		t.Fatal(err)
	}
	if text, _ := banner(); strings.Contains(text, "GPU idle for") {
		t.Fatalf("unreadable GPU shown idle: %q", text)
	}
	if now, _ := sparkline(t, p, ac, id); now != "could not read" {
		t.Fatalf("unreadable GPU's utilisation shown as %q", now)
	}
	for i := range 8 {
		load.Set(i, gpu.MockGPULoad{})
	}
	if err := p.srv.SampleGPUs(ctx); err != nil {
		t.Fatal(err)
	}
	// Three samples, one unread: the line has two points, never a fake 0.
	if now, points := sparkline(t, p, ac, id); now != "0%" || points != 2 {
		t.Fatalf("sparkline: now %q with %d points, want 0%% and 2", now, points)
	}
	// The held GPU's energy counter moves by 1 kWh at 0% (an idle GPU still
	// draws): the rollup books it to this run, and the page shows it.
	for i := range 8 {
		load.Set(i, gpu.MockGPULoad{EnergyMilliJ: 3_600_000_000})
	}
	if err := p.srv.SampleGPUs(ctx); err != nil {
		t.Fatal(err)
	}
	base := time.Now()
	p.srv.Manager.SetClock(func() time.Time { return base.Add(42 * time.Minute) })
	p.srv.Manager.RollupGPUMinutes(ctx)
	if _, body := p.get(ac, "/workbenches/"+id); !strings.Contains(body, "1.000 kWh") {
		t.Errorf("the workbench page does not show the 1 kWh its GPU drew")
	}
	text, warn := banner()
	if !warn || !strings.Contains(text, "GPU idle for 42 min — stops at ") {
		t.Fatalf("after 42 idle minutes: %q warn=%v", text, warn)
	}
	t.Logf("banner: %q", text)

	p.srv.Manager.SetClock(func() time.Time { return base.Add(61 * time.Minute) })
	p.srv.Manager.Touch(id, base.Add(61*time.Minute)) // in use by the proxy's measure: only the GPU is idle
	cullRunManager(t, p)
	wb := cullWaitStopped(t, p, alice, id, 60*time.Second, nil)
	if r, _ := wb["reason"].(string); !strings.Contains(r, "GPU idle") {
		t.Fatalf("reason %q, want GPU idle", r)
	}
	res, body := p.get(ac, "/workbenches/"+id)
	if res.StatusCode != 200 || !strings.Contains(body, "GPU idle") {
		t.Errorf("stopped workbench page does not say why: %d", res.StatusCode)
	}
	// The notebook URL, opened as a browser does (HTML wanted, sign-in
	// redirects followed), is the not-running page, which says why.
	req, _ := http.NewRequest(http.MethodGet, p.ts.URL+"/wb/"+id+"/", nil)
	req.Header.Set("Accept", "text/html")
	nres, err := (&http.Client{Jar: ac.Jar}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	ndoc, err := goquery.NewDocumentFromReader(nres.Body)
	nres.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if why := ndoc.Find(`[data-testid=not-running-why]`).Text(); !strings.Contains(why, "GPU idle") {
		t.Errorf("the not-running page says %q, not that it was GPU idle", why)
	}
	admin := tokenFor(t, p, "admin", "admin")
	fams := scrapeFamilies(t, p, admin)
	found := false
	for _, m := range fams["workbench_culls_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "reason" && l.GetValue() == "gpu_idle" && m.GetCounter().GetValue() == 1 {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("workbench_culls_total{reason=\"gpu_idle\"} is not 1: %v", fams["workbench_culls_total"])
	}
}

// sparkline reads the workbench page's GPU row: the utilisation text and
// the number of points on its utilisation line.
func sparkline(t *testing.T, p *testPortal, c *http.Client, id string) (string, int) {
	t.Helper()
	_, body := p.get(c, "/workbenches/"+id)
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	row := doc.Find(`[data-testid="wb-gpu-telemetry-row"]`)
	if row.Length() != 1 {
		t.Fatalf("%d GPU telemetry rows, want 1", row.Length())
	}
	pts, _ := row.Find("polyline").First().Attr("points")
	return strings.TrimSpace(row.Find(`[data-testid="wb-gpu-util"]`).Text()), len(strings.Fields(pts))
}
