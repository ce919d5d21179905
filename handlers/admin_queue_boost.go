package handlers

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"workbench/models"
)

// adminQueueBoost: POST /admin/queue/{id}/boost (page and API; admin,
// sudo, audited) moves a queued workbench to the front of its priority
// class (issue 12 §6).
func (h *Handler) adminQueueBoost(c *gin.Context) {
	ctx := c.Request.Context()
	wb, err := h.store.WorkbenchByID(ctx, c.Param("id"))
	if err != nil {
		h.fail(c, err)
		return
	}
	notQueued := newError(http.StatusConflict, "not_queued", "the workbench is "+wb.State+", no longer in the queue")
	if wb.State != models.StateQueued {
		h.fail(c, notQueued)
		return
	}
	if err := h.wbs.BoostBy(ctx, wb.ID, currentUser(c).Username); errors.Is(err, models.ErrConflict) {
		h.fail(c, notQueued)
		return
	} else if err != nil {
		h.fail(c, err)
		return
	}
	if isAPI(c) {
		c.Status(http.StatusNoContent)
		return
	}
	h.flash(c, trc(c, "Moved %s to the front of its priority class.", wb.Name))
	h.seeOther(c, "/admin/queue")
}
