package web_test

import (
	"context"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"workbench/models"
)

// labelsOf returns a series' labels as name → value.
func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// labelNames is the sorted, comma-joined label names of a family's series.
func labelNames(f *dto.MetricFamily) string {
	if len(f.GetMetric()) == 0 {
		return ""
	}
	var names []string
	for n := range labelsOf(f.GetMetric()[0]) {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// meteredRun gives ada (in group vision since before it) a closed one-hour run of one GPU
// of a seeded, priced model, ended in the past, not billed yet.
func meteredRun(t *testing.T, p *testPortal) (*models.User, *models.UsageInterval) {
	t.Helper()
	ctx := context.Background()
	s := p.srv.Store
	tokenFor(t, p, "ada", "user")
	ada, _ := s.UserByUsername(ctx, "ada")
	g, _ := s.CreateGroup(ctx, "vision", "")
	// A member since before the run: usage goes to the group its owner
	// was in while it ran.
	joined := time.Now().UTC().Add(-4 * time.Hour)
	s.SetClock(func() time.Time { return joined })
	_ = s.AddGroupMember(ctx, g.ID, ada.ID)
	s.SetClock(time.Now)
	imgs, _ := s.ListImages(ctx, false)
	fls, _ := s.ListFlavors(ctx, false)
	wb := &models.Workbench{Name: "exp", OwnerID: ada.ID, ImageID: imgs[0].ID, FlavorID: fls[0].ID, Token: "t"}
	if err := s.CreateWorkbench(ctx, wb, models.GPUNeed{}, nil); err != nil {
		t.Fatal(err)
	}
	// A closed run of 1 GPU (of a seeded, priced model) for exactly an hour, in the past.
	prices, _ := s.CurrentPrices(ctx, time.Now())
	model := ""
	for _, r := range prices {
		if r.Resource == "gpu" {
			model = r.GPUModel
		}
	}
	iv := &models.UsageInterval{WorkbenchID: wb.ID, UserID: ada.ID, GPUModel: model, GPUCount: 1,
		StartedAt: time.Now().UTC().Add(-3 * time.Hour).Truncate(time.Second)}
	if err := s.OpenInterval(ctx, iv); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseInterval(ctx, wb.ID, iv.StartedAt.Add(time.Hour), "stopped"); err != nil {
		t.Fatal(err)
	}
	return ada, iv
}

// The portal's own series on /metrics, parsed from the exposition format:
// names, types and labels, and values that follow from what the test did
// (an hour of GPU metered for ada in group vision, a refused proxy
// request).
func TestPortalMetricsNamesAndLabels(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	s := p.srv.Store
	admin := tokenFor(t, p, "admin", "admin")
	ada, iv := meteredRun(t, p)
	if _, err := p.srv.Manager.Billing().BillOnce(ctx); err != nil {
		t.Fatal(err)
	}
	// Billing again adds nothing, so counts nothing.
	if _, err := p.srv.Manager.Billing().BillOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if res, _ := p.get(http.DefaultClient, "/wb/nosuchworkbench/lab"); res.StatusCode/100 != 3 && res.StatusCode/100 != 4 {
		t.Fatalf("proxy to nothing: %d", res.StatusCode)
	}

	fams := scrapeFamilies(t, p, admin)
	want := map[string]struct {
		typ    dto.MetricType
		labels string
	}{
		"workbench_charges_micros_total":   {dto.MetricType_COUNTER, "group,resource,user"},
		"workbench_gpu_seconds_total":      {dto.MetricType_COUNTER, "gpu_model,group,user"},
		"workbench_culls_total":            {dto.MetricType_COUNTER, "reason"},
		"workbench_spawn_duration_seconds": {dto.MetricType_HISTOGRAM, "status"},
		"workbench_workbenches":            {dto.MetricType_GAUGE, "state"},
		"workbench_proxy_requests_total":   {dto.MetricType_COUNTER, "code"},
		"workbench_proxy_bytes_total":      {dto.MetricType_COUNTER, "direction"},
		"workbench_gpus":                   {dto.MetricType_GAUGE, "model,state"},
	}
	for name, w := range want {
		f := fams[name]
		if f == nil {
			t.Errorf("/metrics has no %s", name)
			continue
		}
		if f.GetType() != w.typ || labelNames(f) != w.labels {
			t.Errorf("%s: type %v labels %q, want %v %q", name, f.GetType(), labelNames(f), w.typ, w.labels)
		}
	}
	value := func(name string, match map[string]string) (float64, bool) {
		for _, m := range fams[name].GetMetric() {
			l := labelsOf(m)
			ok := true
			for k, v := range match {
				ok = ok && l[k] == v
			}
			if ok {
				if c := m.GetCounter(); c != nil {
					return c.GetValue(), true
				}
				return m.GetGauge().GetValue(), true
			}
		}
		return 0, false
	}
	gpuLines, _ := s.Statement(ctx, ada.ID, iv.StartedAt.AddDate(0, -1, 0), iv.StartedAt.AddDate(0, 1, 0))
	var charged int64
	for _, l := range gpuLines {
		charged += l.AmountMicros
	}
	if v, ok := value("workbench_charges_micros_total", map[string]string{"user": "ada", "group": "vision", "resource": "gpu"}); !ok || v <= 0 {
		t.Errorf("ada's GPU charges: %v %v", v, ok)
	}
	var total float64
	for _, m := range fams["workbench_charges_micros_total"].GetMetric() {
		if labelsOf(m)["user"] == "ada" {
			total += m.GetCounter().GetValue()
		}
	}
	if int64(total) != charged || charged == 0 {
		t.Errorf("charges counted %v, the ledger holds %d (billing twice must not count twice)", total, charged)
	}
	if v, _ := value("workbench_gpu_seconds_total", map[string]string{"user": "ada", "group": "vision"}); v != 3600 {
		t.Errorf("ada's GPU-seconds %v, want 3600", v)
	}
	for _, reason := range []string{"idle", "max_runtime", "gpu_idle", "budget"} {
		if _, ok := value("workbench_culls_total", map[string]string{"reason": reason}); !ok {
			t.Errorf("no culls series for %s", reason)
		}
	}
	if v, ok := value("workbench_workbenches", map[string]string{"state": "requested"}); !ok || v != 1 {
		t.Errorf("workbenches requested: %v %v (the fixture's record)", v, ok)
	}
	if v, _ := value("workbench_proxy_requests_total", map[string]string{"code": "4xx"}); v < 1 {
		t.Errorf("refused proxy requests %v, want ≥ 1", v)
	}
	if _, ok := value("workbench_proxy_bytes_total", map[string]string{"direction": "to_client"}); !ok {
		t.Error("no to_client bytes series")
	}
}
