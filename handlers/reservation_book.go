package handlers

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/templates"
	"workbench/templates/i18n"
)

// reservationBook handles the pool page's booking form (POST /reservations):
// the same Reserve as POST /api/v1/reservations, for the user. Times are
// datetime-local values in UTC. A refused booking shows the page again with
// the reason beside the field (or above the form) and the values kept.
func (h *Handler) reservationBook(c *gin.Context) {
	ctx := c.Request.Context()
	now := h.wbs.Now()
	f := templates.BookingForm{Pool: c.PostForm("pool"), Units: strings.TrimSpace(c.PostForm("units")),
		StartsAt: strings.TrimSpace(c.PostForm("starts_at")), EndsAt: strings.TrimSpace(c.PostForm("ends_at")),
		Note: strings.TrimSpace(c.PostForm("note")), Group: strings.TrimSpace(c.PostForm("group")), Errors: templates.FormErrors{}}
	pool := strings.Split(f.Pool, "|")
	if len(pool) != 3 || pool[1] == "" {
		f.Errors["pool"] = i18n.T(ctx, "choose what to book")
	}
	units, err := strconv.Atoi(f.Units)
	if err != nil || units < 1 {
		f.Errors["units"] = i18n.T(ctx, "give a whole number of units, 1 or more")
	}
	start, okStart := parseBookingTime(f.StartsAt)
	if !okStart {
		f.Errors["starts_at"] = i18n.T(ctx, "give a date and time (UTC)")
	}
	end, okEnd := parseBookingTime(f.EndsAt)
	switch {
	case !okEnd:
		f.Errors["ends_at"] = i18n.T(ctx, "give a date and time (UTC)")
	case okStart && !end.After(start):
		f.Errors["ends_at"] = i18n.T(ctx, "the end must be after the start")
	case !end.After(now):
		f.Errors["ends_at"] = i18n.T(ctx, "the end is in the past: choose a window that is not over")
	case okStart && end.Sub(start) > models.MaxReservation:
		f.Errors["ends_at"] = i18n.T(ctx, "a booking lasts at most %d days", int(models.MaxReservation.Hours()/24))
	}
	if utf8.RuneCountInString(f.Note) > 200 {
		f.Errors["note"] = i18n.T(ctx, "a note has at most 200 characters")
	}
	var group *models.Group
	if f.Group != "" {
		g, err := h.store.GroupByName(ctx, f.Group)
		if err != nil {
			f.Errors["group"] = i18n.T(ctx, "choose one of your groups")
		}
		group = g
	}
	if len(f.Errors) > 0 {
		h.renderGPUPage(c, http.StatusBadRequest, gpuPageForms{booking: &f})
		return
	}
	u := currentUser(c)
	r, err := h.wbs.Reserve(ctx, u, orchestrator.ReserveRequest{Kind: pool[0], Model: pool[1], Profile: pool[2], Units: units,
		Start: start, End: end, Note: f.Note, By: u, Group: group})
	var ve *models.ValidationError
	switch {
	case errors.As(err, &ve):
		field := ve.Field
		if field == "gpu_model" || field == "unit_kind" || field == "mig_profile" {
			field = "pool"
		}
		f.Errors[field] = fieldMessage(ctx, ve.Message)
		h.renderGPUPage(c, http.StatusBadRequest, gpuPageForms{booking: &f})
	case err != nil:
		e := h.classify(err)
		if e.Status >= 500 && e.Status != http.StatusServiceUnavailable {
			h.fail(c, err)
			return
		}
		// Over the weekly cap or the quota, or the window's units already
		// booked: the scheduler's reason, in the reader's language, made
		// one sentence (the reasons read as clauses, without a full stop),
		// its dates worded for the reader (the models write them in UTC,
		// as the API gives them).
		f.Errors["_"] = i18n.T(ctx, "Not booked: %s.", templates.RefusalDates(ctx, h.refusalClause(c, err)))
		h.renderGPUPage(c, e.Status, gpuPageForms{booking: &f})
	default:
		s, en := r.StartsAt, r.EndsAt
		msg := i18n.T(ctx, "Booked #%d: %d × %s, %s to %s.", r.ID, r.Units, unitLabel(ctx, r.Kind(), r.GPUModel, r.MIGProfile),
			templates.WhenIn(ctx, &s), templates.WhenIn(ctx, &en))
		if r.GroupID != nil {
			msg += " " + i18n.T(ctx, "Any member of %s may use it.", r.GroupName)
		}
		msg += h.heldNote(ctx, r)
		h.flash(c, msg)
		h.seeOther(c, "/gpus#reservations")
	}
}

// heldNote says, of a booking open now, how many of its units its holders'
// running workbenches already hold: those count toward it, so it keeps
// only the rest back for new launches ("" when none is held, or it opens
// later).
func (h *Handler) heldNote(ctx context.Context, r *models.Reservation) string {
	if time.Now().Before(r.StartsAt) {
		return ""
	}
	held, err := h.wbs.HeldByHolders(ctx, r)
	if err != nil || held == 0 {
		return ""
	}
	if held >= r.Units {
		return " " + i18n.T(ctx, "Running workbenches of its holders already hold %d of these units, and they count toward it: it keeps no more back for now, and holds its units for its holders as those stop.", held)
	}
	return " " + i18n.T(ctx, "Running workbenches of its holders already hold %d of these units, and they count toward it: it keeps %d more back for new launches now.", held, r.Units-held)
}
