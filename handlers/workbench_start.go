package handlers

import (
	"github.com/gin-gonic/gin"
)

// workbenchStart: start a stopped workbench again (GPUs allocated afresh).
func (h *Handler) workbenchStart(c *gin.Context) {
	wb, ok := h.ownedWorkbench(c)
	if !ok {
		return
	}
	if err := h.wbs.Start(c.Request.Context(), wb.ID, currentUser(c)); err != nil {
		if isAPI(c) {
			h.fail(c, err)
			return
		}
		h.flashError(c, "Could not start: "+classify(err).Message)
		seeOther(c, "/workbenches/"+wb.ID)
		return
	}
	if isAPI(c) {
		h.apiWorkbench(c)
		return
	}
	seeOther(c, "/workbenches/"+wb.ID)
}
