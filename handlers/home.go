package handlers

import (
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"workbench/orchestrator"
	"workbench/templates"
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
	v := templates.HomeView{Workbenches: rows, GPUSummary: gpuSummary(gpus)}
	if err := h.wbs.EngineRecentlyUp(ctx); err != nil {
		v.EngineDown = "The Docker engine is not reachable: workbenches cannot be launched or changed until it is back."
	}
	h.render(c, http.StatusOK, templates.HomePage(h.workPage(c, "Workbenches"), v))
}

// gpuSummary is a one-line description of the pool, e.g. "8 GPUs, 7 free".
func gpuSummary(gpus []orchestrator.PoolGPU) string {
	if len(gpus) == 0 {
		return "No GPUs in the pool."
	}
	free := 0
	for _, g := range gpus {
		if g.State == orchestrator.GPUFree {
			free++
		}
	}
	return fmt.Sprintf("%d GPUs, %d free.", len(gpus), free)
}
