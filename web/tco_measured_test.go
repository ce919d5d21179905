package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// "Use measured": the TCO takes the idle and active watts fitted to the
// last 30 days of per-minute telemetry and the utilisation-weighted busy
// share, instead of the typed guesses; telemetry older than 30 days and of
// other models is left out; with no telemetry the request is refused with
// the reason. The admin's electricity price is the TCO's default.
func TestTCOUseMeasured(t *testing.T) {
	p := newPortal(t)
	ctx := context.Background()
	tok := tokenFor(t, p, "ada", "user")
	now := time.Now().UTC().Truncate(time.Minute)
	var rows []models.GPUMinute
	add := func(uuid, model string, at time.Time, util, watts int64) {
		rows = append(rows, models.GPUMinute{GPUUUID: uuid, Minute: at.Unix(), Samples: 4, UtilSamples: 4, UtilSum: 4 * util,
			PowerSamples: 4, PowerSumMW: 4 * watts * 1000, GPUModel: model})
	}
	// H100s: 70 W idle, +6 W per % (670 W flat out); busy 1 minute in 4 at 80%.
	for i := 0; i < 40; i++ {
		at := now.Add(-time.Duration(i+2) * time.Hour)
		u := int64(0)
		if i%4 == 0 {
			u = 80
		}
		add("GPU-h100-a", "NVIDIA H100 80GB HBM3", at, u, 70+6*u)
	}
	add("GPU-h100-a", "NVIDIA H100 80GB HBM3", now.AddDate(0, 0, -31), 100, 5000) // too old
	add("GPU-a100-a", "NVIDIA A100-SXM4-80GB", now.Add(-time.Hour), 100, 4000)    // another model
	if err := p.srv.Store.SaveGPUMinutes(ctx, rows); err != nil {
		t.Fatal(err)
	}
	if err := p.srv.Store.SetElectricityPrice(ctx, 210_000); err != nil {
		t.Fatal(err)
	}

	st, j := p.api("POST", "/api/v1/calculator/tco", tok, `{"gpu_model": "H100-80GB", "use_measured": true, "gpu_active_watts": 999, "utilization": 0.9}`)
	if st != http.StatusOK {
		t.Fatalf("TCO use measured: %d %v", st, j)
	}
	q := j["query"].(string)
	for _, want := range []string{"gpu_idle_watts=70", "gpu_active_watts=670", "utilization=0.2", "electricity_per_kwh=0.21"} {
		if !strings.Contains(q, want) {
			t.Errorf("TCO inputs %q lack %s", q, want)
		}
	}
	if note, _ := j["measured"].(string); !strings.Contains(note, "40 GPU-minutes") {
		t.Errorf("measured note %q", note)
	}

	// Without it, the typed values stand.
	_, j = p.api("POST", "/api/v1/calculator/tco", tok, `{"gpu_model": "H100-80GB", "gpu_active_watts": 650}`)
	if q := j["query"].(string); !strings.Contains(q, "gpu_active_watts=650") {
		t.Errorf("typed watts replaced without use_measured: %q", q)
	}

	st, j = p.api("POST", "/api/v1/calculator/tco", tok, `{"gpu_model": "L40S", "use_measured": true}`)
	if st != http.StatusBadRequest || !strings.Contains(j["error"].(map[string]any)["message"].(string), "no GPU telemetry") {
		t.Errorf("no telemetry: %d %v", st, j)
	}

	// The page: the box stays ticked and says what was measured.
	c := p.client()
	p.login(c, "ada", "ada-password")
	_, body := p.get(c, "/calculator?gpu_model=H100-80GB&use_measured=1")
	doc := mpDoc(t, body)
	if _, ok := doc.Find(`[data-testid=tco-use_measured]`).Attr("checked"); !ok {
		t.Error("use measured not ticked on the page")
	}
	if !strings.Contains(doc.Find(`[data-testid=tco-measured]`).Text(), "70 W idle") {
		t.Errorf("page note %q", doc.Find(`[data-testid=tco-measured]`).Text())
	}
	if v, _ := doc.Find(`[data-testid=tco-gpu_active_watts]`).Attr("value"); v != "670" {
		t.Errorf("active watts field %q, want the measured 670", v)
	}
}
