package orchestrator

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"workbench/models"
)

// Collector exposes the pool and the workbenches to Prometheus. It reads the
// current state at scrape time (no counters to keep in sync).
type Collector struct {
	m         *Manager
	gpus      *prometheus.Desc
	util      *prometheus.Desc
	wbs       *prometheus.Desc
	engineUp  *prometheus.Desc
	simulated *prometheus.Desc
	moneyErrs *prometheus.Desc
	lease     *prometheus.Desc
	writable  *prometheus.Desc
	dcgm      *dcgmCollector
}

// NewCollector returns a Prometheus collector over the manager's pool.
func NewCollector(m *Manager) *Collector {
	return &Collector{
		m:         m,
		gpus:      prometheus.NewDesc("workbench_gpus", "GPUs in the pool by state and model.", []string{"state", "model"}, nil),
		util:      prometheus.NewDesc("workbench_gpu_utilization_percent", "Latest GPU utilisation sample.", []string{"uuid", "model"}, nil),
		wbs:       prometheus.NewDesc("workbench_workbenches", "Workbenches by state.", []string{"state"}, nil),
		engineUp:  prometheus.NewDesc("workbench_engine_up", "1 when the container engine answers.", nil, nil),
		simulated: prometheus.NewDesc("workbench_gpus_simulated", "1 when the GPU pool is simulated.", nil, nil),
		lease: prometheus.NewDesc("workbench_install_lease_held",
			"1 when this process holds the install lease and reconciles; 0 when another live portal of the same install does.", nil, nil),
		writable: prometheus.NewDesc("workbench_database_writable",
			fmt.Sprintf("1 when the database can be written; 0 when its disk is full or read-only and every change is refused (probed at most every %s).", models.WriteProbeEvery), nil, nil),
		moneyErrs: prometheus.NewDesc("workbench_money_errors_total",
			"Billing (pricing, recording), budget enforcement and metering-start errors since the portal started.", []string{"kind"}, nil),
		dcgm: newDCGMCollector(m),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.gpus, c.util, c.wbs, c.engineUp, c.simulated, c.moneyErrs, c.lease, c.writable} {
		ch <- d
	}
	ch <- queueLengthDesc
	c.dcgm.describe(ch)
	c.m.metrics.describe(ch)
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if gpus, err := c.m.pool.List(ctx); err == nil {
		type key struct{ state, model string }
		count := map[key]int{}
		for _, g := range gpus {
			count[key{g.State, g.Model}]++
			if g.Util != nil && g.Util.UtilPercent != nil {
				ch <- prometheus.MustNewConstMetric(c.util, prometheus.GaugeValue, float64(*g.Util.UtilPercent), g.UUID, g.Model)
			}
		}
		for k, n := range count {
			ch <- prometheus.MustNewConstMetric(c.gpus, prometheus.GaugeValue, float64(n), k.state, k.model)
		}
	}
	if wbs, err := c.m.store.ListWorkbenches(ctx, 0); err == nil {
		count := map[string]int{}
		for _, s := range append(models.ActiveStates, models.StateStopped, models.StateFailed, models.StateQueued, models.StatePreempted) {
			count[s] = 0
		}
		for _, w := range wbs {
			count[w.State]++
		}
		for s, n := range count {
			ch <- prometheus.MustNewConstMetric(c.wbs, prometheus.GaugeValue, float64(n), s)
		}
		queueLength(ctx, c.m, wbs, ch)
	}
	up := 0.0
	if c.m.rt.Ping(ctx) == nil {
		up = 1
	}
	ch <- prometheus.MustNewConstMetric(c.engineUp, prometheus.GaugeValue, up)
	sim := 0.0
	if c.m.pool.Simulated() {
		sim = 1
	}
	ch <- prometheus.MustNewConstMetric(c.simulated, prometheus.GaugeValue, sim)
	held := 0.0
	if ok, _ := c.m.LeaseStatus(); ok {
		held = 1
	}
	ch <- prometheus.MustNewConstMetric(c.lease, prometheus.GaugeValue, held)
	writable := 0.0
	if c.m.store.WriteState(ctx).Writable {
		writable = 1
	}
	ch <- prometheus.MustNewConstMetric(c.writable, prometheus.GaugeValue, writable)
	for kind, n := range c.m.MoneyErrors() {
		ch <- prometheus.MustNewConstMetric(c.moneyErrs, prometheus.CounterValue, float64(n), kind)
	}
	c.dcgm.collect(ctx, ch)
	c.m.metrics.collect(ch)
}
