package handlers

import (
	"context"
	"net/http"
	"strings"

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
	free, freeMIG, freeSlices := 0, 0, 0
	hasMIG, hasSlices := false, false
	for _, g := range gpus {
		if g.State == orchestrator.GPUFree {
			free++
		}
		hasMIG = hasMIG || g.State == orchestrator.GPUMIG
		hasSlices = hasSlices || g.State == orchestrator.GPUShared
		if g.State != orchestrator.GPUMIG && g.State != orchestrator.GPUShared {
			continue
		}
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
	// Only the kinds the pool has ("0 slices free" hinted at slices that
	// no GPU is shared in); punctuation from the catalog (，。 in Chinese).
	var units []string
	if hasMIG {
		units = append(units, i18n.T(ctx, "%d MIG instances free", freeMIG))
	}
	if hasSlices {
		units = append(units, i18n.T(ctx, "%d slices free", freeSlices))
	}
	if len(units) > 0 {
		s += i18n.T(ctx, " %s.", strings.Join(units, i18n.T(ctx, ", ")))
	}
	return s
}
