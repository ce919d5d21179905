package handlers

import (
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"workbench/orchestrator"
	"workbench/templates"
)

func (h *Handler) home(c *gin.Context) {
	gpus, err := h.pool.List(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	h.render(c, http.StatusOK, templates.HomePage(h.page(c, "Workbenches"), templates.HomeView{GPUSummary: gpuSummary(gpus)}))
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
