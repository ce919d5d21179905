package handlers

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/templates"
	"workbench/templates/i18n"
)

// home lists the user's workbenches.
func (h *Handler) home(c *gin.Context) {
	ctx := c.Request.Context()
	gpus, err := h.pool.ListRecent(ctx)
	if err != nil {
		h.fail(c, err)
		return
	}
	rows, err := h.listRows(ctx, currentUser(c).ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	v := templates.HomeView{Workbenches: rows, GPUSummary: gpuSummary(ctx, gpus)}
	if err := h.wbs.EngineRecentlyUp(ctx); err != nil {
		v.EngineDown = i18n.T(ctx, "The Docker engine is not reachable: workbenches cannot be launched or changed until it is back.")
		if h.pool.OnKubernetes() {
			v.EngineDown = i18n.T(ctx, "The Kubernetes API server is not reachable: workbenches cannot be launched or changed until it is back.")
		}
	}
	h.render(c, http.StatusOK, templates.HomePage(h.workPage(c, i18n.T(c.Request.Context(), "Workbenches")), v))
}

// gpuSummary is a one-line description of the pool, e.g. "8 GPUs, 7
// free." A pool with MIG or shared GPUs also counts their free units: with
// every whole GPU taken it had read "0 free" while slices and MIG
// instances waited for takers.
func gpuSummary(ctx context.Context, gpus []orchestrator.PoolGPU) string {
	if len(gpus) == 0 {
		return i18n.T(ctx, "No GPUs in the pool.")
	}
	free, freeMIG, freeSlices, split := 0, 0, 0, false
	for _, g := range gpus {
		if g.State == orchestrator.GPUFree {
			free++
		}
		if g.State != orchestrator.GPUMIG && g.State != orchestrator.GPUShared {
			continue
		}
		split = true
		for _, u := range g.Units {
			switch {
			case u.WorkbenchID != "":
			case u.Kind == models.UnitMIG:
				freeMIG++
			case u.Kind == models.UnitSlice:
				freeSlices++
			}
		}
	}
	s := i18n.T(ctx, "%d GPUs, %d free.", len(gpus), free)
	if split {
		s += " " + i18n.T(ctx, "%d MIG instances free", freeMIG) + ", " + i18n.T(ctx, "%d slices free", freeSlices) + "."
	}
	return s
}
