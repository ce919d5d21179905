package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// workbenchStop: the owner stops a workbench (always allowed).
func (h *Handler) workbenchStop(c *gin.Context) {
	wb, ok := h.ownedWorkbench(c)
	if !ok {
		return
	}
	if err := h.wbs.Stop(c.Request.Context(), wb.ID, ""); err != nil {
		h.fail(c, err)
		return
	}
	if isAPI(c) {
		h.apiWorkbench(c)
		return
	}
	h.flash(c, "Workbench stopped. Its GPUs are free; your home files are kept.")
	seeOther(c, "/workbenches/"+wb.ID)
}

// adminWorkbenchStop: an admin force-stops anyone's workbench (recorded).
func (h *Handler) adminWorkbenchStop(c *gin.Context) {
	ctx := c.Request.Context()
	wb, err := h.store.WorkbenchByID(ctx, c.Param("id"))
	if err != nil {
		h.fail(c, err)
		return
	}
	reason := "stopped by an administrator (" + currentUser(c).Username + ")"
	if err := h.wbs.Stop(ctx, wb.ID, reason); err != nil {
		h.fail(c, err)
		return
	}
	h.audit(c, "workbench.force_stop", wb.ID, map[string]string{"state": wb.State}, map[string]string{"state": "stopped"})
	if isAPI(c) {
		c.Status(http.StatusNoContent)
		return
	}
	h.flash(c, "Workbench "+wb.Name+" stopped.")
	seeOther(c, "/admin/workbenches")
}
