package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"workbench/models/pricing"
	"workbench/orchestrator"
	"workbench/orchestrator/gpu"
)

// apiWorkbenchTelemetry: GET /api/v1/workbenches/{id}/telemetry — per unit
// (whole GPU, MIG instance, shared slice holder) its latest reading and
// last hour at one point a minute, and the energy booked to the workbench.
// Owner or admin, as the workbench itself.
func (h *Handler) apiWorkbenchTelemetry(c *gin.Context) {
	wb, ok := h.ownedWorkbench(c)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	tel, err := h.wbs.WorkbenchTelemetry(ctx, wb)
	if err != nil {
		h.fail(c, err)
		return
	}
	out := APIWorkbenchTelemetry{WorkbenchID: wb.ID, State: wb.State, Simulated: h.pool.Simulated(), Units: []APIUnitTelemetry{},
		Energy: APIWorkbenchEnergy{RunShareMJ: tel.RunEnergy.ShareMJ, TotalShareMJ: tel.Energy.ShareMJ, Currency: h.cfg.Currency}}
	if tel.RunEnergy.Measured {
		out.Energy.RunMJ = ptr(tel.RunEnergy.MJ)
		if price, set, err := h.store.ElectricityPrice(ctx); err == nil && set {
			out.Energy.RunCostMicros = ptr(pricing.EnergyCost(tel.RunEnergy.MJ, price))
		}
	}
	if tel.Energy.Measured {
		out.Energy.TotalMJ = ptr(tel.Energy.MJ)
	}
	if tel.GPUIdle.Timeout > 0 && !tel.GPUIdle.Since.IsZero() {
		out.GPUIdleSince = ptr(tel.GPUIdle.Since.UTC())
	}
	for _, u := range tel.Units {
		out.Units = append(out.Units, apiUnitTelemetry(u))
	}
	c.JSON(http.StatusOK, out)
}

func apiUnitTelemetry(u orchestrator.WBUnitTelemetry) APIUnitTelemetry {
	a := APIUnitTelemetry{Kind: u.Kind, UUID: u.UUID, GPUUUID: u.GPUUUID, Profile: u.Profile, EnergyShareBasis: u.ShareBasis,
		Series: make([]APIMinutePoint, 0, len(u.Series))}
	if u.Kind == "mig" && u.GPUInstanceID >= 0 {
		a.GPUInstanceID = ptr(u.GPUInstanceID)
	}
	if u.HasLatest {
		a.Latest = apiUnitReading(u.Kind, u.Latest)
	}
	for _, p := range u.Series {
		a.Series = append(a.Series, APIMinutePoint{Minute: p.Minute.UTC(), UtilPercent: p.UtilPercent, MemUsedMiB: p.MemUsedMiB, EnergyMJ: p.EnergyMJ})
	}
	return a
}

// apiUnitReading lists a reading's figures, null and named in
// not_available where NVML gave none. Power and temperature are a whole
// GPU's only.
func apiUnitReading(kind string, s gpu.Sample) *APIUnitReading {
	r := &APIUnitReading{At: s.At.UTC(), NotAvailable: []string{}}
	na := func(name string) { r.NotAvailable = append(r.NotAvailable, name) }
	if s.Readable(gpu.FieldUtil) {
		r.UtilPercent = ptr(s.UtilPercent)
	} else {
		na("gpu_percent")
	}
	if s.Readable(gpu.FieldMemUtil) {
		r.MemCopyPercent = ptr(s.MemUtilPercent)
	} else {
		na("memory_copy_percent")
	}
	if s.Readable(gpu.FieldMemory) {
		r.MemUsedMiB = ptr(s.MemUsedMiB)
		if kind != "slice" { // a slice holder has no free memory of its own
			r.MemFreeMiB = ptr(s.MemFreeMiB)
		}
	} else {
		na("memory_used_mib")
	}
	if r.MemFreeMiB == nil {
		na("memory_free_mib")
	}
	if kind == "gpu" && s.Readable(gpu.FieldPower) {
		r.PowerW = ptr(float64(s.PowerMilliW) / 1000)
	} else {
		na("power_w")
	}
	if kind == "gpu" && s.Readable(gpu.FieldTemp) {
		r.TemperatureC = ptr(s.TempC)
	} else {
		na("temperature_c")
	}
	return r
}

// ptr returns a pointer to a copy of v (nullable JSON figures).
func ptr[T any](v T) *T { return &v }
