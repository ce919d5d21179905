package orchestrator

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"workbench/models"
	"workbench/models/pricing"
)

// Cull kinds, the low-cardinality reason label of workbench_culls_total
// (the reason text shown to the user carries durations and is not a label).
const (
	CullIdle       = "idle"
	CullMaxRuntime = "max_runtime"
	CullGPUIdle    = "gpu_idle"
	// CullBudget: the budget enforcer stopped it at a monthly limit (a
	// spent budget or GPU-hour limit), at the instant's timer or in the
	// billing round's safety net.
	CullBudget = "budget"
)

// portalMetrics are the counters and histograms the manager updates as
// things happen (everything else is read at scrape time).
type portalMetrics struct {
	spawn *prometheus.HistogramVec
	culls *prometheus.CounterVec
	// charges and gpuSeconds count the ledger lines metering appended
	// (not corrections: a reversal would make a counter go down).
	charges    *prometheus.CounterVec
	gpuSeconds *prometheus.CounterVec
	queue      *queueMetrics

	mu        sync.Mutex
	usernames map[int64]string
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
			Help: "Workbenches the portal stopped on its own, by reason (idle, max_runtime, gpu_idle, budget).",
		}, []string{"reason"}),
		charges: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "workbench_charges_micros_total",
			Help: "Charges metering appended to the ledger since the portal started, in micro-units of the currency, by user, group (the one lines are filed under) and resource. Corrections are not counted.",
		}, []string{"user", "group", "resource"}),
		gpuSeconds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "workbench_gpu_seconds_total",
			Help: "GPU-seconds metering appended to the ledger since the portal started, by user, group and GPU model.",
		}, []string{"user", "group", "gpu_model"}),
		queue:     newQueueMetrics(),
		usernames: map[int64]string{},
	}
	// Every series exists from the start, so a dashboard and rate() see 0
	// rather than no data.
	for _, s := range []string{"success", "failure"} {
		p.spawn.WithLabelValues(s)
	}
	for _, r := range []string{CullIdle, CullMaxRuntime, CullGPUIdle, CullBudget} {
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

// metered counts the lines a billing pass appended; name resolves a user id.
func (p *portalMetrics) metered(lines []models.LedgerEntry, name func(int64) string) {
	if p == nil {
		return
	}
	for _, l := range lines {
		if !l.Added {
			continue
		}
		p.mu.Lock()
		user, ok := p.usernames[l.UserID]
		if !ok {
			user = name(l.UserID)
			p.usernames[l.UserID] = user
		}
		p.mu.Unlock()
		if l.AmountMicros > 0 {
			p.charges.WithLabelValues(user, l.GroupName, l.Resource).Add(float64(l.AmountMicros))
		}
		if l.Resource == pricing.GPU && l.Seconds > 0 {
			p.gpuSeconds.WithLabelValues(user, l.GroupName, l.GPUModel).Add(float64(l.Seconds*l.QuantityMilli) / pricing.MilliUnits)
		}
	}
}

// meteredLines feeds the counters from a billing pass.
func (m *Manager) meteredLines(ctx context.Context, lines []models.LedgerEntry) {
	m.metrics.metered(lines, func(id int64) string {
		if u, err := m.store.UserByID(ctx, id); err == nil {
			return u.Username
		}
		return strconv.FormatInt(id, 10)
	})
}

func (p *portalMetrics) describe(ch chan<- *prometheus.Desc) {
	p.spawn.Describe(ch)
	p.culls.Describe(ch)
	p.charges.Describe(ch)
	p.gpuSeconds.Describe(ch)
	p.queue.describe(ch)
}

func (p *portalMetrics) collect(ch chan<- prometheus.Metric) {
	p.spawn.Collect(ch)
	p.culls.Collect(ch)
	p.charges.Collect(ch)
	p.gpuSeconds.Collect(ch)
	p.queue.collect(ch)
}
