package handlers

import (
	"encoding/json"
	"net/url"
	"testing"

	"workbench/models/pricing"
)

// API bodies become query values without float rounding, so the API and the
// page parse the same text.
func TestCalcJSONValues(t *testing.T) {
	var body map[string]json.RawMessage
	if err := json.Unmarshal([]byte(`{"server_price":250000.10,"pue":"1.4","gpu_model":"H100","start":null,"utilization":1e-1}`), &body); err != nil {
		t.Fatal(err)
	}
	v, errs := calcJSONValues(body)
	if errs != nil {
		t.Fatal(errs)
	}
	want := url.Values{"server_price": {"250000.10"}, "pue": {"1.4"}, "gpu_model": {"H100"}, "utilization": {"1e-1"}}
	if v.Encode() != want.Encode() {
		t.Errorf("values %v, want %v", v, want)
	}
	for _, bad := range []string{`{"utilization":true}`, `{"pue":[1]}`, `{"gpu_model":{"a":1}}`} {
		body = nil
		_ = json.Unmarshal([]byte(bad), &body)
		if _, errs := calcJSONValues(body); len(errs) != 1 {
			t.Errorf("%s: %v", bad, errs)
		}
	}
}

// The page names the estimate's GPU model shape_gpu_model (gpu_model is the
// TCO's); encoding and decoding agree.
func TestCalcEstimateQueryNames(t *testing.T) {
	q, _ := url.ParseQuery("flavor=custom&shape_gpu_model=A&gpu_count=2&cpu_cores=4&memory_gib=8&gpu_model=TCO-MODEL&utilization=0.5&days=3&hours_per_day=2")
	ev := calcEstimateQuery(q)
	if ev.Get("gpu_model") != "A" || ev.Get("utilization") != "" {
		t.Fatalf("estimate part %v", ev)
	}
	in, errs := pricing.ParseEstimate(ev, pricing.DefaultEstimate())
	if errs != nil || in.Shape.GPUModel != "A" || in.Shape.GPUCount != 2 {
		t.Fatalf("%+v %v", in, errs)
	}
	back := calcPageEstimateValues(in)
	if back.Get("shape_gpu_model") != "A" || back.Has("gpu_model") {
		t.Errorf("page values %v", back)
	}
	if tq := calcTCOQuery(q); tq.Get("gpu_model") != "TCO-MODEL" || tq.Get("utilization") != "0.5" || tq.Has("days") {
		t.Errorf("TCO part %v", tq)
	}
}

func TestParsePercentBps(t *testing.T) {
	for in, want := range map[string]int64{"35": 3500, "0": 0, "99.99": 9999, "12.5": 1250} {
		if got, err := parsePercentBps(in); err != nil || got != want {
			t.Errorf("%q: %d %v", in, got, err)
		}
	}
	for _, in := range []string{"100", "-1", "12.345", "abc", ""} {
		if _, err := parsePercentBps(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestCalcVsText(t *testing.T) {
	for _, c := range []struct {
		bps    int64
		ok     bool
		text   string
		saving bool
	}{{-3520, true, "saves 35.2% here", true}, {1200, true, "12% more here", false}, {0, false, "—", false}} {
		text, saving := calcVsText(nil, pricing.Comparison{VsHereBps: c.bps, VsHereOK: c.ok})
		if text != c.text || saving != c.saving {
			t.Errorf("%d: %q %v", c.bps, text, saving)
		}
	}
}
