package orchestrator

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Cull kinds, the low-cardinality reason label of workbench_culls_total
// (the reason text shown to the user carries durations and is not a label).
const (
	CullIdle       = "idle"
	CullMaxRuntime = "max_runtime"
	CullGPUIdle    = "gpu_idle"
)

// portalMetrics are the counters and histograms the manager updates as
// things happen (everything else is read at scrape time).
type portalMetrics struct {
	spawn *prometheus.HistogramVec
	culls *prometheus.CounterVec
}

func newPortalMetrics() *portalMetrics {
	p := &portalMetrics{
		// Named and bucketed as JupyterHub's spawn histogram, so the same
		// panels work: from the launch (or start) request to Jupyter
		// answering, or to the failure.
		spawn: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "workbench_spawn_duration_seconds",
			Help:    "Time from a launch or start request to Jupyter answering (status=success) or the launch failing (status=failure).",
			Buckets: []float64{0.5, 1, 2.5, 5, 10, 15, 30, 60, 120, 180, 300, 600, 1200},
		}, []string{"status"}),
		culls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "workbench_culls_total",
			Help: "Workbenches the portal stopped on its own, by reason (idle, max_runtime, gpu_idle).",
		}, []string{"reason"}),
	}
	// Every series exists from the start, so a dashboard and rate() see 0
	// rather than no data.
	for _, s := range []string{"success", "failure"} {
		p.spawn.WithLabelValues(s)
	}
	for _, r := range []string{CullIdle, CullMaxRuntime, CullGPUIdle} {
		p.culls.WithLabelValues(r)
	}
	return p
}

func (p *portalMetrics) spawned(ok bool, took time.Duration) {
	if p == nil { // a Manager built without NewManager (unit tests)
		return
	}
	status := "success"
	if !ok {
		status = "failure"
	}
	p.spawn.WithLabelValues(status).Observe(took.Seconds())
}

func (p *portalMetrics) culled(kind string) {
	if p != nil {
		p.culls.WithLabelValues(kind).Inc()
	}
}

func (p *portalMetrics) describe(ch chan<- *prometheus.Desc) {
	p.spawn.Describe(ch)
	p.culls.Describe(ch)
}

func (p *portalMetrics) collect(ch chan<- prometheus.Metric) {
	p.spawn.Collect(ch)
	p.culls.Collect(ch)
}
