package handlers

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
	"workbench/templates/i18n"
)

// The time zone a user reads times in beside UTC. Times stay UTC first on
// every page (they are typed, booked and exported in UTC, and deadlines in
// notices say UTC); a student in Shanghai reading "stops at 14:00 UTC" no
// longer adds eight hours in her head.

func (h *Handler) timeZonePage(c *gin.Context) {
	h.renderTimeZone(c, http.StatusOK, templates.TimeZoneView{Zone: currentUser(c).TimeZone})
}

func (h *Handler) renderTimeZone(c *gin.Context, status int, v templates.TimeZoneView) {
	v.Suggestions = templates.CommonTimeZones
	h.render(c, status, templates.TimeZonePage(h.page(c, i18n.T(c.Request.Context(), "Time zone")), v))
}

// timeZoneSave: POST /settings/time-zone (time_zone; empty for UTC only).
func (h *Handler) timeZoneSave(c *gin.Context) {
	zone := c.PostForm("time_zone")
	err := h.setTimeZone(c, currentUser(c), zone)
	var ve *models.ValidationError
	switch {
	case errors.As(err, &ve):
		// What was typed stays in the field, beside why it was refused.
		h.renderTimeZone(c, http.StatusBadRequest, templates.TimeZoneView{Zone: zone,
			Errors: templates.FormErrors{ve.Field: fieldMessage(c.Request.Context(), ve.Message)}})
		return
	case err != nil:
		h.fail(c, err)
		return
	}
	if name, _, _ := models.ParseTimeZone(zone); name != "" {
		h.flash(c, i18n.T(c.Request.Context(), "Times now show the time in %s beside UTC.", name))
	} else {
		h.flash(c, i18n.T(c.Request.Context(), "Times now show in UTC only."))
	}
	h.seeOther(c, "/settings/time-zone")
}

// setTimeZone saves u's zone, audited (the page and PATCH /api/v1/me).
func (h *Handler) setTimeZone(c *gin.Context, u *models.User, zone string) error {
	name, _, err := models.ParseTimeZone(zone)
	if err != nil {
		return err
	}
	return h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		return auditRec("user.time_zone", u.Username, map[string]string{"time_zone": u.TimeZone},
			map[string]string{"time_zone": name}), tx.SetUserTimeZone(c.Request.Context(), u.ID, name)
	})
}
