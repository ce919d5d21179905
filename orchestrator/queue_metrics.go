package orchestrator

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"workbench/models"
)

// Queue metrics (issue 13 §4; docs/telemetry.md): the queue's length is
// read at scrape time (the database is the truth); the wait and the
// preemptions are observed as they happen.

// Outcomes of a wait in the queue, the outcome label of
// workbench_queue_wait_seconds.
const (
	QueuePlaced    = "placed"
	QueueCancelled = "cancelled"
	QueueExpired   = "expired"
)

// queueMetrics are the queue's histogram and counter.
type queueMetrics struct {
	wait        *prometheus.HistogramVec
	preemptions prometheus.Counter
}

func newQueueMetrics() *queueMetrics {
	q := &queueMetrics{
		wait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "workbench_queue_wait_seconds",
			Help: "Time a queued workbench waited, observed when it left the queue: placed, cancelled (stopped by its owner) or expired (the maximum wait).",
			// From seconds (a free GPU, nobody ahead) to a day (the
			// longest waits the default maximum allows).
			Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, 43200, 86400},
		}, []string{"outcome"}),
		preemptions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "workbench_preemptions_total",
			Help: "Preemptible workbenches stopped (after their grace) because a higher-priority launch needed their GPUs.",
		}),
	}
	for _, o := range []string{QueuePlaced, QueueCancelled, QueueExpired} {
		q.wait.WithLabelValues(o)
	}
	return q
}

// waited observes how long a workbench that queued at queuedAt waited.
func (q *queueMetrics) waited(outcome string, queuedAt *time.Time, now time.Time) {
	if q == nil || queuedAt == nil {
		return
	}
	d := now.Sub(*queuedAt)
	if d < 0 {
		d = 0
	}
	q.wait.WithLabelValues(outcome).Observe(d.Seconds())
}

func (q *queueMetrics) preempted() {
	if q != nil {
		q.preemptions.Inc()
	}
}

func (q *queueMetrics) describe(ch chan<- *prometheus.Desc) {
	q.wait.Describe(ch)
	q.preemptions.Describe(ch)
}

func (q *queueMetrics) collect(ch chan<- prometheus.Metric) {
	q.wait.Collect(ch)
	q.preemptions.Collect(ch)
}

// observeLeft observes the waits of workbenches that left the queue (read
// again after the drain's commit: the queued time stays on the row).
func (m *Manager) observeLeft(ctx context.Context, outcome string, ids []string, now time.Time) {
	if m.metrics == nil {
		return
	}
	for _, id := range ids {
		if wb, err := m.store.WorkbenchByID(ctx, id); err == nil {
			m.metrics.queue.waited(outcome, wb.QueuedAt, now)
		}
	}
}

// queueLengthDesc is workbench_queue_length's description.
var queueLengthDesc = prometheus.NewDesc("workbench_queue_length",
	"Queued workbenches (waiting for GPUs), by priority class.", []string{"priority"}, nil)

// queueLength reports the queued workbenches by priority class; every
// class has a series (0 when none waits).
func queueLength(ctx context.Context, m *Manager, wbs []models.Workbench, ch chan<- prometheus.Metric) {
	count := map[string]int{}
	if classes, err := m.store.PriorityClasses(ctx); err == nil {
		for _, c := range classes {
			count[c.Name] = 0
		}
	}
	for _, w := range wbs {
		if w.State == models.StateQueued {
			count[w.Priority]++
		}
	}
	for p, n := range count {
		ch <- prometheus.MustNewConstMetric(queueLengthDesc, prometheus.GaugeValue, float64(n), p)
	}
}
