package orchestrator

import (
	"context"
	"os"
	"sort"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"workbench/models"
	"workbench/orchestrator/gpu"
)

// dcgmLabels are dcgm-exporter's labels (GPU_I_PROFILE and GPU_I_ID name a
// MIG instance, empty on a whole GPU's series, as dcgm-exporter leaves
// them), plus the holder's workbench, user and group, which dcgm-exporter
// cannot give outside Kubernetes. Existing dcgm-exporter dashboards keep
// working: they select on gpu, UUID, modelName, Hostname and GPU_I_*.
var dcgmLabels = []string{"gpu", "UUID", "device", "modelName", "Hostname", "GPU_I_PROFILE", "GPU_I_ID", "workbench", "user", "group"}

// dcgmField is one DCGM_FI_* series: its name, help (dcgm-exporter's
// wording and units), the Sample field it needs readable, and its value.
type dcgmField struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	field gpu.Field
	value func(gpu.Sample) float64
	// perProcess: a shared slice's holder has a figure of its own for this
	// series (the sum over its processes); the others are the GPU's only.
	perProcess bool
}

func newDCGMFields() []dcgmField {
	f := func(name, help string, kind prometheus.ValueType, field gpu.Field, value func(gpu.Sample) float64) dcgmField {
		return dcgmField{desc: prometheus.NewDesc(name, help, dcgmLabels, nil), kind: kind, field: field, value: value,
			perProcess: name == "DCGM_FI_DEV_GPU_UTIL" || name == "DCGM_FI_DEV_FB_USED"}
	}
	g := prometheus.GaugeValue
	return []dcgmField{
		f("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", g, gpu.FieldUtil, func(s gpu.Sample) float64 { return float64(s.UtilPercent) }),
		f("DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilization (in %).", g, gpu.FieldMemUtil, func(s gpu.Sample) float64 { return float64(s.MemUtilPercent) }),
		f("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", g, gpu.FieldMemory, func(s gpu.Sample) float64 { return float64(s.MemUsedMiB) }),
		f("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", g, gpu.FieldMemory, func(s gpu.Sample) float64 { return float64(s.MemFreeMiB) }),
		f("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", g, gpu.FieldPower, func(s gpu.Sample) float64 { return float64(s.PowerMilliW) / 1000 }),
		f("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "Total energy consumption since boot (in mJ).", prometheus.CounterValue, gpu.FieldEnergy,
			func(s gpu.Sample) float64 { return float64(s.EnergyMilliJ) }),
		f("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", g, gpu.FieldTemp, func(s gpu.Sample) float64 { return float64(s.TempC) }),
		f("DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", g, gpu.FieldSMClock, func(s gpu.Sample) float64 { return float64(s.SMClockMHz) }),
		f("DCGM_FI_DEV_MEM_CLOCK", "Memory clock frequency (in MHz).", g, gpu.FieldMemClock, func(s gpu.Sample) float64 { return float64(s.MemClockMHz) }),
		f("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "Total number of double-bit volatile ECC errors.", g, gpu.FieldECC,
			func(s gpu.Sample) float64 { return float64(s.ECCUncorrected) }),
		f("DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.", g, gpu.FieldXID, func(s gpu.Sample) float64 { return float64(s.LastXID) }),
	}
}

// dcgmCollector exports the sampler's latest reading of every GPU, of
// every MIG instance (with GPU_I_PROFILE, GPU_I_ID and the instance's own
// holder), and of every shared slice's holder (its processes' own figures,
// on a series labelled with that holder; the whole GPU's series carries no
// holder). A reading that could not be taken is left out, never exported
// as 0: a dashboard then shows a gap, not an idle GPU.
type dcgmCollector struct {
	m        *Manager
	hostname string
	fields   []dcgmField
	energy   *prometheus.Desc
}

// wbEnergyName is the per-workbench energy counter: what
// DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION is for a GPU (mJ, a counter), for
// a workbench, split by basis: "measured" (whole GPUs' counter deltas)
// and "share" (its share of MIG and shared GPUs' measured energy).
const wbEnergyName = "workbench_gpu_energy_consumption_millijoules_total"

func newDCGMCollector(m *Manager) *dcgmCollector {
	host, _ := os.Hostname()
	return &dcgmCollector{m: m, hostname: host, fields: newDCGMFields(),
		energy: prometheus.NewDesc(wbEnergyName,
			"GPU energy booked to the workbench since it was created (in mJ), rolled up each minute: counter deltas of the GPUs it holds whole (basis measured) and its share of MIG and shared GPUs' measured energy (basis share).",
			[]string{"workbench", "user", "group", "basis"}, nil)}
}

func (c *dcgmCollector) describe(ch chan<- *prometheus.Desc) {
	for _, f := range c.fields {
		ch <- f.desc
	}
	ch <- c.energy
}

// collectEnergy exports the energy counters of the active workbenches
// that have measured energy (none measured: no series, not 0).
func (c *dcgmCollector) collectEnergy(ctx context.Context, ch chan<- prometheus.Metric) {
	a, err := c.m.currentAttribution(ctx)
	if err != nil || len(a.holders) == 0 {
		return
	}
	ids := make([]string, 0, len(a.holders))
	for id := range a.holders {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	totals, err := c.m.store.WorkbenchEnergyTotals(ctx, ids)
	if err != nil {
		c.m.log.Warn("metrics: workbench energy", "err", err)
		return
	}
	for _, id := range ids {
		t, ok := totals[id]
		if !ok || !t.Measured {
			continue
		}
		h := a.holders[id]
		ch <- prometheus.MustNewConstMetric(c.energy, prometheus.CounterValue, float64(t.MJ-t.ShareMJ), h.WorkbenchID, h.User, h.Group, "measured")
		ch <- prometheus.MustNewConstMetric(c.energy, prometheus.CounterValue, float64(t.ShareMJ), h.WorkbenchID, h.User, h.Group, "share")
	}
}

func (c *dcgmCollector) collect(ctx context.Context, ch chan<- prometheus.Metric) {
	c.collectEnergy(ctx, ch)
	uses, err := c.m.GPUUse(ctx)
	if err != nil {
		c.m.log.Warn("metrics: GPU use", "err", err)
		return
	}
	c.collectUses(ch, uses)
}

// collectUses exports each GPU's series and its units'. No two series may
// have the same labels: one duplicate fails the whole scrape (HTTP 500).
func (c *dcgmCollector) collectUses(ch chan<- prometheus.Metric, uses []GPUUse) {
	for _, u := range uses {
		if !u.HasSample {
			continue
		}
		gpuLabels := []string{strconv.Itoa(u.Index), u.UUID, "nvidia" + strconv.Itoa(u.Index), u.Model, c.hostname}
		labels := append(append(gpuLabels[:len(gpuLabels):len(gpuLabels)], "", ""), u.Holder.WorkbenchID, u.Holder.User, u.Holder.Group)
		for _, f := range c.fields {
			if !u.Sample.Readable(f.field) {
				continue
			}
			ch <- prometheus.MustNewConstMetric(f.desc, f.kind, f.value(u.Sample), labels...)
		}
		// A unit's series differs from the GPU's by its MIG profile and
		// instance and by its holder. A shared GPU held whole lists its
		// slices under the whole GPU's holder: the same labels as the
		// GPU's own series, already sent. Two compute instances in one GPU
		// instance would share GPU_I_ID.
		seen := map[string]bool{unitSeriesKey("", "", u.Holder.WorkbenchID): true}
		for _, uu := range u.Units {
			profile, gi := unitLabels(uu)
			key := unitSeriesKey(profile, gi, uu.Holder.WorkbenchID)
			if seen[key] {
				continue
			}
			seen[key] = true
			c.collectUnit(ch, gpuLabels, uu)
		}
	}
}

// unitLabels are a unit's GPU_I_PROFILE and GPU_I_ID labels: a MIG
// instance's; none for a slice.
func unitLabels(uu UnitUse) (profile, gi string) {
	if uu.Kind == models.UnitMIG {
		return uu.Profile, strconv.Itoa(uu.GPUInstanceID)
	}
	return "", ""
}

func unitSeriesKey(profile, gi, workbenchID string) string {
	return profile + "\x00" + gi + "\x00" + workbenchID
}

// collectUnit exports a MIG instance's or a slice holder's own readings.
func (c *dcgmCollector) collectUnit(ch chan<- prometheus.Metric, gpuLabels []string, uu UnitUse) {
	profile, gi := unitLabels(uu)
	labels := append(append(gpuLabels[:len(gpuLabels):len(gpuLabels)], profile, gi), uu.Holder.WorkbenchID, uu.Holder.User, uu.Holder.Group)
	for _, f := range c.fields {
		if !uu.Sample.Readable(f.field) || (uu.Kind == models.UnitSlice && !f.perProcess) {
			continue
		}
		ch <- prometheus.MustNewConstMetric(f.desc, f.kind, f.value(uu.Sample), labels...)
	}
}
