package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"workbench/orchestrator"
	"workbench/templates"
)

func (h *Handler) gpuPage(c *gin.Context) {
	gpus, err := h.pool.List(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	v := templates.GPUsView{Backend: h.pool.Backend(), Status: h.pool.Status(), Simulated: h.pool.Simulated(),
		CanDrain: currentUser(c).IsAdmin()}
	for _, g := range gpus {
		v.GPUs = append(v.GPUs, gpuRow(g))
	}
	h.render(c, http.StatusOK, templates.GPUsPage(h.page(c, "GPUs"), v))
}

func gpuRow(g orchestrator.PoolGPU) templates.GPURow {
	r := templates.GPURow{Index: g.Index, UUID: g.UUID, Model: g.Model, MemoryMiB: g.MemoryMiB, State: g.State,
		Health: g.Health, Detail: g.HealthDetail, Drained: g.Drained, WorkbenchID: g.WorkbenchID}
	if g.Util != nil {
		r.HasReading = true
		r.UtilPercent, r.MemUsedMiB, r.TempC, r.PowerW = g.Util.UtilPercent, g.Util.MemUsedMiB, g.Util.TempC, g.Util.PowerW
	}
	for _, s := range g.History {
		r.UtilHistory = append(r.UtilHistory, float64(s.UtilPercent))
	}
	for _, m := range g.MIG {
		r.MIG = append(r.MIG, templates.MIGRow{Profile: m.Profile, UUID: m.UUID, MemoryMiB: m.MemoryMiB})
	}
	return r
}
