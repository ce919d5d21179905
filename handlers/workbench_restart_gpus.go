package handlers

import (
	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
	"workbench/templates/i18n"
)

// workbenchRestartGPUs: a workbench in CPU-only mode goes back to its
// flavor with GPUs. A running one is stopped and started again; when no GPU
// is free, a whole-GPU flavor's workbench is stopped and waits in the queue
// for them, while a MIG or slice flavor's is refused (no_capacity) and keeps
// running without GPUs (see Manager.RestartWithGPUs).
func (h *Handler) workbenchRestartGPUs(c *gin.Context) {
	wb, ok := h.ownedWorkbench(c)
	if !ok {
		return
	}
	// A running one loses what is in its memory: asked first, as the
	// page's button does with script.
	ctx := c.Request.Context()
	q := templates.ConfirmView{
		Subject:  i18n.T(ctx, "Workbench %s", wb.Name),
		Question: i18n.T(ctx, "Restart with GPUs? The workbench is stopped and started again with its GPUs: unsaved work in memory is lost, files in your home directory are kept."),
		Yes:      i18n.T(ctx, "Restart with GPUs"),
		Back:     "/workbenches/" + wb.ID,
	}
	if wb.State == models.StateRunning && !h.askedFirst(c, q) {
		return
	}
	if err := h.wbs.RestartWithGPUs(c.Request.Context(), wb.ID, currentUser(c)); err != nil {
		if isAPI(c) {
			h.fail(c, err)
			return
		}
		h.refuseTo(c, i18n.T(c.Request.Context(), "Could not restart with GPUs: %s.", h.refusalClause(c, err)), "/workbenches/"+wb.ID)
		return
	}
	h.record(c, "workbench.restart_gpus", wb.ID, nil, nil)
	if isAPI(c) {
		h.apiWorkbench(c)
		return
	}
	h.seeOther(c, "/workbenches/"+wb.ID)
}
