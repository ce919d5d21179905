package handlers

import (
	"errors"
	"strconv"

	"github.com/gin-gonic/gin"

	"workbench/orchestrator"
	"workbench/templates"
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
	// Asked where the cancel would go ahead (the booker's or an admin's
	// booking not yet released): anyone else gets CancelReservation's
	// answer at once, 404 for a booking they cannot see.
	me := currentUser(c)
	if r, err := h.store.ReservationByID(ctx, id); err == nil && r.ReleasedAt == nil && (r.UserID == me.ID || me.IsAdmin()) &&
		!h.askedFirst(c, templates.ConfirmView{Question: i18n.T(ctx, "Cancel booking #%d? Its units go back to everyone.", id),
			Yes: i18n.T(ctx, "Cancel the booking"), Back: "/gpus#reservations"}) {
		return
	}
	err = h.wbs.CancelReservation(ctx, me, id)
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
	h.seeOther(c, "/gpus#reservations")
}
