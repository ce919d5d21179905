package orchestrator

import (
	"context"
	"os"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"workbench/orchestrator/gpu"
)

// dcgmLabels are dcgm-exporter's labels for a whole GPU, plus the holder's
// workbench, user and group, which dcgm-exporter cannot give outside
// Kubernetes. Existing dcgm-exporter dashboards keep working: they select
// on gpu, UUID, modelName and Hostname.
var dcgmLabels = []string{"gpu", "UUID", "device", "modelName", "Hostname", "workbench", "user", "group"}

// dcgmField is one DCGM_FI_* series: its name, help (dcgm-exporter's
// wording and units), the Sample field it needs readable, and its value.
type dcgmField struct {
	desc  *prometheus.Desc
	kind  prometheus.ValueType
	field gpu.Field
	value func(gpu.Sample) float64
}

func newDCGMFields() []dcgmField {
	f := func(name, help string, kind prometheus.ValueType, field gpu.Field, value func(gpu.Sample) float64) dcgmField {
		return dcgmField{desc: prometheus.NewDesc(name, help, dcgmLabels, nil), kind: kind, field: field, value: value}
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

// dcgmCollector exports the sampler's latest reading of every GPU. A
// reading that could not be taken is left out, never exported as 0: a
// dashboard then shows a gap, not an idle GPU.
type dcgmCollector struct {
	m        *Manager
	hostname string
	fields   []dcgmField
}

func newDCGMCollector(m *Manager) *dcgmCollector {
	host, _ := os.Hostname()
	return &dcgmCollector{m: m, hostname: host, fields: newDCGMFields()}
}

func (c *dcgmCollector) describe(ch chan<- *prometheus.Desc) {
	for _, f := range c.fields {
		ch <- f.desc
	}
}

func (c *dcgmCollector) collect(ctx context.Context, ch chan<- prometheus.Metric) {
	uses, err := c.m.GPUUse(ctx)
	if err != nil {
		c.m.log.Warn("metrics: GPU use", "err", err)
		return
	}
	for _, u := range uses {
		if !u.HasSample {
			continue
		}
		labels := []string{strconv.Itoa(u.Index), u.UUID, "nvidia" + strconv.Itoa(u.Index), u.Model, c.hostname,
			u.Holder.WorkbenchID, u.Holder.User, u.Holder.Group}
		for _, f := range c.fields {
			if !u.Sample.Readable(f.field) {
				continue
			}
			ch <- prometheus.MustNewConstMetric(f.desc, f.kind, f.value(u.Sample), labels...)
		}
	}
}
