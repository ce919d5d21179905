package handlers

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/templates/i18n"
)

// workbenchExtend: the owner pushes a running workbench's maximum-runtime
// stop back by one hour ("+1 h"), within the quota's ceiling (see
// orchestrator.RuntimeRule). POST /workbenches/{id}/extend (form) and
// POST /api/v1/workbenches/{id}/extend (JSON: the new deadlines).
func (h *Handler) workbenchExtend(c *gin.Context) {
	wb, ok := h.ownedWorkbench(c)
	if !ok {
		return
	}
	d, err := h.wbs.ExtendRuntimeBy(c.Request.Context(), wb.ID, currentUser(c).Username)
	if err != nil {
		h.fail(c, err)
		return
	}
	if isAPI(c) {
		c.JSON(http.StatusOK, APIRuntimeExtended{ID: wb.ID, RuntimeStopAt: d.RuntimeStopAt.Format(timeJSON),
			RuntimeLimitSeconds: int64(d.RuntimeLimit / time.Second), CanExtend: d.CanExtend})
		return
	}
	h.flash(c, i18n.T(c.Request.Context(), "Maximum runtime extended: it now ends at %s.", clockText(c.Request.Context(), d.RuntimeStopAt, time.Now())))
	h.seeOther(c, "/workbenches/"+wb.ID)
}
