package handlers

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates/i18n"
)

// adminQueueMove: POST /admin/queue/{id}/move (form field position) and
// POST /api/v1/admin/queue/{id}/move {"position": N} (admin, sudo,
// audited as queue.move) move a queued workbench to position N of the
// queue of its units, within its priority class (issue 12 §6: reorder to
// any position; Boost is "to the front"). The page's form (a number and
// Move on each row of /admin/queue) comes back to the queue with a flash:
// what was done, or what was wrong with the number.
func (h *Handler) adminQueueMove(c *gin.Context) {
	ctx := c.Request.Context()
	var position int
	if isAPI(c) {
		var body struct {
			Position int `json:"position"`
		}
		if !h.bindJSON(c, &body) {
			return
		}
		position = body.Position
	} else {
		n, err := strconv.Atoi(strings.TrimSpace(c.PostForm("position")))
		if err != nil || n < 1 {
			// The page's form: back to the queue, the problem in the flash.
			h.flashError(c, i18n.T(ctx, "give a whole number (1 is the front)"))
			h.seeOther(c, "/admin/queue")
			return
		}
		position = n
	}
	wb, err := h.store.WorkbenchByID(ctx, c.Param("id"))
	if err != nil {
		h.fail(c, err)
		return
	}
	notQueued := newError(http.StatusConflict, "not_queued", "the workbench is "+wb.State+", no longer in the queue")
	got, err := h.wbs.MoveQueued(ctx, wb.ID, position, currentUser(c).Username)
	var ve *models.ValidationError
	if !isAPI(c) && (errors.Is(err, models.ErrConflict) || errors.As(err, &ve)) {
		if ve != nil {
			h.flashError(c, trcMsg(c, ve.Message))
		} else {
			h.flashError(c, trc(c, "%s is no longer in the queue.", wb.Name))
		}
		h.seeOther(c, "/admin/queue")
		return
	}
	if errors.Is(err, models.ErrConflict) {
		h.fail(c, notQueued)
		return
	} else if err != nil {
		h.fail(c, err)
		return
	}
	if isAPI(c) {
		fresh, err := h.store.WorkbenchByID(ctx, wb.ID)
		if err != nil {
			h.fail(c, err)
			return
		}
		c.JSON(http.StatusOK, APIQueueMove{ID: wb.ID, Position: got, State: fresh.State, QueuePosition: fresh.QueuePosition})
		return
	}
	h.flash(c, i18n.T(ctx, "Moved %s to position %d of its queue.", wb.Name, got))
	h.seeOther(c, "/admin/queue")
}
