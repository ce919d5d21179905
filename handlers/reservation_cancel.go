package handlers

import (
	"errors"
	"strconv"

	"github.com/gin-gonic/gin"

	"workbench/orchestrator"
	"workbench/templates/i18n"
)

// reservationCancel handles a booking's Cancel button on the pool page
// (POST /reservations/:id/cancel): its booker, or an admin, releases it
// (CancelReservation, audited as reservation.cancel). Someone else's reads
// as not found.
func (h *Handler) reservationCancel(c *gin.Context) {
	ctx := c.Request.Context()
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil {
		h.fail(c, errNotFound)
		return
	}
	err = h.wbs.CancelReservation(ctx, currentUser(c), id)
	var se *orchestrator.ErrState
	switch {
	case errors.As(err, &se):
		h.flashError(c, i18n.T(ctx, "Booking #%d was already released.", id))
	case err != nil:
		h.fail(c, err)
		return
	default:
		h.flash(c, i18n.T(ctx, "Booking #%d cancelled: its units go back to everyone.", id))
	}
	seeOther(c, "/gpus#reservations")
}
