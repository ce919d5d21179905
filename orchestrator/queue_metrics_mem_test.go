package orchestrator

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"workbench/models"
)

// scrapeText gathers the manager's collector, writes the text exposition
// (what /metrics serves) and parses it back.
func scrapeText(t *testing.T, m *Manager) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(m))
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range fams {
		if err := enc.Encode(f); err != nil {
			t.Fatal(err)
		}
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	parsed, err := parser.TextToMetricFamilies(&buf)
	if err != nil {
		t.Fatalf("parse exposition: %v", err)
	}
	return parsed
}

// queueSeries finds the metric of family name whose label key is value.
func queueSeries(t *testing.T, fams map[string]*dto.MetricFamily, name, key, value string) *dto.Metric {
	t.Helper()
	f := fams[name]
	if f == nil {
		t.Fatalf("no %s in the exposition", name)
	}
	for _, mt := range f.GetMetric() {
		for _, lp := range mt.GetLabel() {
			if lp.GetName() == key && lp.GetValue() == value {
				return mt
			}
		}
		if key == "" {
			return mt
		}
	}
	t.Fatalf("no %s{%s=%q}", name, key, value)
	return nil
}

// assertWait checks one outcome's count and sum of waited seconds.
func assertWait(t *testing.T, fams map[string]*dto.MetricFamily, outcome string, count uint64, sum float64) {
	t.Helper()
	h := queueSeries(t, fams, "workbench_queue_wait_seconds", "outcome", outcome).GetHistogram()
	if h.GetSampleCount() != count || h.GetSampleSum() != sum {
		t.Errorf("queue wait %s: count %d sum %v, want %d and %v", outcome, h.GetSampleCount(), h.GetSampleSum(), count, sum)
	}
}

// In memory: the queue's length by priority class, and how long each
// workbench waited by how its wait ended (placed, cancelled, expired), as
// /metrics exposes them.
func TestMemQueueMetrics(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	def, err := r.store.PriorityClassFor(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	r.fill(t, r.alice, LaunchRequest{})
	bob := r.user(t, "bob")
	first := r.launch(t, bob, "first", LaunchRequest{Queue: true})
	r.advance(time.Second)
	second := r.launch(t, bob, "second", LaunchRequest{Queue: true})
	r.advance(time.Second)
	batch := r.launch(t, bob, "batch", LaunchRequest{Queue: true, Priority: "batch"})

	fams := scrapeText(t, r.m)
	if n := queueSeries(t, fams, "workbench_queue_length", "priority", def.Name).GetGauge().GetValue(); n != 2 {
		t.Errorf("queue length %s: %v, want 2", def.Name, n)
	}
	if n := queueSeries(t, fams, "workbench_queue_length", "priority", "batch").GetGauge().GetValue(); n != 1 {
		t.Errorf("queue length batch: %v, want 1", n)
	}
	if n := queueSeries(t, fams, "workbench_queue_length", "priority", "preemptible").GetGauge().GetValue(); n != 0 {
		t.Errorf("queue length preemptible: %v, want 0 (a series for every class)", n)
	}
	assertWait(t, fams, QueuePlaced, 0, 0)

	r.advance(30 * time.Minute)
	if err := r.m.Stop(ctx, second.ID, ""); err != nil { // cancelled after 1801 s
		t.Fatal(err)
	}
	r.waitState(t, second.ID, models.StateStopped)
	if err := r.m.Stop(ctx, r.wb.ID, ""); err != nil { // a GPU frees: first placed after 1802 s
		t.Fatal(err)
	}
	r.waitState(t, first.ID, models.StateRunning)
	r.advance(r.m.opt.QueueMaxWait) // batch expires after 1800 s + the maximum wait
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got := r.waitState(t, batch.ID, models.StateStopped); got.QueuedAt == nil {
		t.Fatal("batch lost its queued time")
	}

	fams = scrapeText(t, r.m)
	assertWait(t, fams, QueuePlaced, 1, 1802)
	assertWait(t, fams, QueueCancelled, 1, 1801)
	assertWait(t, fams, QueueExpired, 1, 1800+r.m.opt.QueueMaxWait.Seconds())
	for _, p := range []string{def.Name, "batch"} {
		if n := queueSeries(t, fams, "workbench_queue_length", "priority", p).GetGauge().GetValue(); n != 0 {
			t.Errorf("queue length %s after: %v, want 0", p, n)
		}
	}
	if n := queueSeries(t, fams, "workbench_preemptions_total", "", "").GetCounter().GetValue(); n != 0 {
		t.Errorf("preemptions %v, want 0", n)
	}
}
