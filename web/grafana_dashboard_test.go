package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"workbench/models"
	"workbench/orchestrator/gpu"
	"workbench/web"
)

// scrapeFamilies GETs /metrics as an admin and parses the exposition.
func scrapeFamilies(t *testing.T, p *testPortal, token string) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := metricsGet(t, http.DefaultClient, p.ts.URL, token)
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// metricInExpr finds metric names in a PromQL expression: the portal's
// and the dcgm-exporter ones.
var metricInExpr = regexp.MustCompile(`\b(DCGM_FI_[A-Z_]+|workbench_[a-z_]+)\b`)

// The shipped Grafana dashboard queries only metrics /metrics serves, and
// the portal serves the dcgm-named GPU series with real readings.
func TestGrafanaDashboardMetricsExist(t *testing.T) {
	srv := dgxh100.New()
	load := gpu.AttachMockLoad(srv)
	for i := range 8 {
		load.Set(i, gpu.MockGPULoad{UtilPercent: uint32(10 * i), MemUtilPercent: 5, PowerMilliW: 300000, EnergyMilliJ: 1e9, TempC: 50})
	}
	load.Set(3, gpu.MockGPULoad{Fail: true})
	p := newPortal(t, func(c *web.Config) {
		c.GPUOptions = []gpu.Option{gpu.WithNVML(srv, true, "mock:dgxh100")}
	})
	admin := tokenFor(t, p, "admin", "admin")

	if err := p.srv.SampleGPUs(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Series labelled by user appear once something was metered.
	_, iv := meteredRun(t, p)
	// A rolled-up minute of a GPU ada's (still requested, so active)
	// workbench held, with measured energy: booked to her run, it gives
	// the per-workbench energy counter a series.
	if err := p.srv.Store.SaveGPUMinutes(context.Background(), []models.GPUMinute{{GPUUUID: "GPU-grafana",
		Minute: iv.StartedAt.Truncate(time.Minute).Add(10 * time.Minute).Unix(), Samples: 4, WorkbenchID: iv.WorkbenchID,
		EnergyMJ: 36_000_000, EnergySamples: 3}}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.srv.Manager.Billing().BillOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	fams := scrapeFamilies(t, p, admin)
	if f := fams["DCGM_FI_DEV_GPU_UTIL"]; f == nil || len(f.GetMetric()) != 7 {
		t.Fatalf("DCGM_FI_DEV_GPU_UTIL should have a series per readable GPU (7 of 8): %v", f)
	}
	for _, m := range fams["DCGM_FI_DEV_GPU_UTIL"].GetMetric() {
		l := map[string]string{}
		for _, lp := range m.GetLabel() {
			l[lp.GetName()] = lp.GetValue()
		}
		if l["gpu"] == "3" {
			t.Error("the unreadable GPU 3 exported a utilisation")
		}
		if !strings.HasPrefix(l["UUID"], "GPU-") || !strings.Contains(l["modelName"], "H100") || l["Hostname"] == "" {
			t.Errorf("dcgm labels missing: %v", l)
		}
		if _, ok := l["workbench"]; !ok {
			t.Errorf("no workbench label: %v", l)
		}
	}

	raw, err := os.ReadFile("../docs/grafana/workbench.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	var exprs []string
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	for _, v := range dash.Templating.List {
		exprs = append(exprs, v.Definition)
	}
	queried := map[string]bool{}
	for _, e := range exprs {
		for _, m := range metricInExpr.FindAllString(e, -1) {
			queried[m] = true
		}
	}
	for _, must := range []string{"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE",
		"DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_XID_ERRORS",
		"workbench_spawn_duration_seconds_bucket", "workbench_culls_total", "workbench_workbenches",
		"workbench_queue_length", "workbench_queue_wait_seconds_bucket", "workbench_preemptions_total",
		"workbench_gpu_energy_consumption_millijoules_total"} {
		if !queried[must] {
			t.Errorf("the dashboard does not chart %s", must)
		}
	}
	for name := range queried {
		family := name
		if _, ok := fams[family]; !ok {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				family = strings.TrimSuffix(family, suffix)
				if f := fams[family]; f != nil && f.GetType() == dto.MetricType_HISTOGRAM {
					break
				}
			}
		}
		if _, ok := fams[family]; !ok {
			t.Errorf("the dashboard queries %s, which /metrics does not serve", name)
		}
	}
}
