package handlers

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/templates"
)

// adminReservations: GET /admin/reservations[?from=&to=] — the
// reservation settings, the weekly booking caps and the
// reserved-but-unused report (admin; issue 12 §4). The same functions as
// the admin API (admin_reservations.go) read and change them.
func (h *Handler) adminReservations(c *gin.Context) {
	h.renderAdminReservations(c, http.StatusOK, templates.AdminReservationsView{})
}

// adminReservationsCSV: GET /admin/reservations/unused.csv?from=&to= — the
// report as the API's CSV.
func (h *Handler) adminReservationsCSV(c *gin.Context) {
	if err := onlyQueryParams(c, "from", "to"); err != nil {
		h.fail(c, err)
		return
	}
	rep, err := h.reservedUnusedReport(c.Request.Context(), c.Query("from"), c.Query("to"))
	if err != nil {
		h.fail(c, err)
		return
	}
	h.writeReservedUnusedCSV(c, rep)
}

// adminReservationSettingsSave: POST /admin/reservations/settings
// (checkbox bill_unused; admin, sudo, audited).
func (h *Handler) adminReservationSettingsSave(c *gin.Context) {
	on := c.PostForm("bill_unused") == "on"
	if err := h.setReservationBillUnused(c, on); err != nil {
		h.fail(c, err)
		return
	}
	if on {
		h.flash(c, trc(c, "Reserved-but-unused time is billed from now on."))
	} else {
		h.flash(c, trc(c, "Reserved-but-unused time is no longer billed."))
	}
	h.seeOther(c, "/admin/reservations")
}

// adminReservationCapSave: POST /admin/reservations/caps (scope, name,
// unit_hours_per_week; empty removes the cap) — the add form and each
// row's edit form (admin, sudo, audited). A refused change is shown back
// on the add form with what was typed.
func (h *Handler) adminReservationCapSave(c *gin.Context) {
	form := templates.ReservationCapForm{Scope: strings.TrimSpace(c.PostForm("scope")), Name: strings.TrimSpace(c.PostForm("name")),
		Hours: strings.TrimSpace(c.PostForm("unit_hours_per_week"))}
	refuse := func(field, msg string) {
		h.renderAdminReservations(c, http.StatusBadRequest, templates.AdminReservationsView{CapForm: form,
			CapErrors: templates.FormErrors{field: msg}})
	}
	var hours *int64
	if form.Hours != "" {
		n, err := strconv.ParseInt(form.Hours, 10, 64)
		if err != nil {
			refuse("unit_hours_per_week", trc(c, "a whole number of unit-hours (leave empty for no cap)"))
			return
		}
		hours = &n
	}
	name := form.Name
	switch form.Scope {
	case models.ScopeDefault:
		name = "-"
	case models.ScopeUser, models.ScopeGroup:
		if name == "" {
			refuse("name", trc(c, "name the user or group"))
			return
		}
	}
	err := h.setReservationCap(c, form.Scope, name, hours)
	var ve *models.ValidationError
	if errors.As(err, &ve) {
		field := ve.Field
		if field == "subject_id" {
			field = "name"
		}
		refuse(field, reservationMessageT(c, ve.Message))
		return
	} else if err != nil {
		h.fail(c, err)
		return
	}
	who := capSubject(c, form.Scope, name)
	if hours == nil {
		h.flash(c, trc(c, "Removed the weekly booking cap of %s.", who))
	} else {
		h.flash(c, trc(c, "The weekly booking cap of %s is %d unit-hours.", who, *hours))
	}
	h.seeOther(c, "/admin/reservations")
}

// capSubject names a cap's scope in the reader's language.
func capSubject(c *gin.Context, scope, name string) string {
	switch scope {
	case models.ScopeUser:
		return trc(c, "user %s", name)
	case models.ScopeGroup:
		return trc(c, "group %s", name)
	}
	return trc(c, "everyone (default)")
}

// reservationMessageT words the cap and report validation messages in the
// reader's language (a name stays as typed).
func reservationMessageT(c *gin.Context, msg string) string {
	switch {
	case strings.HasPrefix(msg, "no user "):
		return trc(c, "no user %s", strings.TrimPrefix(msg, "no user "))
	case strings.HasPrefix(msg, "no group "):
		return trc(c, "no group %s", strings.TrimPrefix(msg, "no group "))
	case msg == "the scope is default, group or user":
		return trc(c, "the scope is default, group or user")
	case msg == "must be 0 or more (leave empty for no cap)":
		return trc(c, "must be 0 or more (leave empty for no cap)")
	case msg == "a date YYYY-MM-DD or an RFC 3339 time":
		return trc(c, "a date YYYY-MM-DD or an RFC 3339 time")
	case msg == "must be after from":
		return trc(c, "must be after the start")
	}
	return trcMsg(c, msg)
}

// renderAdminReservations fills v with the setting, the caps and the
// report (its period from the query) and renders the page.
func (h *Handler) renderAdminReservations(c *gin.Context, status int, v templates.AdminReservationsView) {
	ctx := c.Request.Context()
	var err error
	if v.BillUnused, err = h.store.ReservationBillUnused(ctx); err != nil {
		h.fail(c, err)
		return
	}
	caps, err := h.store.ReservationCaps(ctx)
	if err != nil {
		h.fail(c, err)
		return
	}
	groups, err := h.store.ListGroups(ctx)
	if err != nil {
		h.fail(c, err)
		return
	}
	groupName := map[int64]string{}
	for _, g := range groups {
		groupName[g.ID] = g.Name
	}
	for _, r := range caps {
		row := templates.ReservationCapRow{Scope: r.Scope, Name: "-", Hours: strconv.FormatInt(r.UnitHoursPerWeek, 10),
			UpdatedBy: r.UpdatedBy, UpdatedAt: r.UpdatedAt.UTC().Format("2006-01-02 15:04")}
		switch r.Scope {
		case models.ScopeUser:
			row.Name = strconv.FormatInt(r.SubjectID, 10)
			if u, err := h.store.UserByID(ctx, r.SubjectID); err == nil {
				row.Name = u.Username
			}
		case models.ScopeGroup:
			row.Name = groupName[r.SubjectID]
		}
		v.Caps = append(v.Caps, row)
	}
	if v.CapForm.Scope == "" {
		v.CapForm.Scope = models.ScopeUser
	}
	v.From, v.To, v.Currency = c.Query("from"), c.Query("to"), h.cfg.Currency
	rep, err := h.reservedUnusedReport(ctx, v.From, v.To)
	var ve *models.ValidationError
	if errors.As(err, &ve) {
		v.ReportErrors = templates.FormErrors{ve.Field: reservationMessageT(c, ve.Message)}
		if status == http.StatusOK {
			status = http.StatusBadRequest
		}
	} else if err != nil {
		h.fail(c, err)
		return
	} else {
		v.Period = rep.From.Format("2006-01-02 15:04") + " – " + rep.To.Format("2006-01-02 15:04") + " UTC"
		for _, it := range rep.Items {
			v.Report = append(v.Report, templates.ReservedUnusedRow{User: it.User, Reservations: it.Reservations, Reserved: it.ReservedUnitHours,
				Used: it.UsedUnitHours, Unused: it.UnusedUnitHours, BilledMicros: it.BilledMicros, Unsettled: it.Unsettled})
		}
		q := url.Values{}
		q.Set("from", rep.From.Format(time.RFC3339))
		q.Set("to", rep.To.Format(time.RFC3339))
		v.CSVHref = "/admin/reservations/unused.csv?" + q.Encode()
	}
	h.render(c, status, templates.AdminReservationsPage(h.page(c, trc(c, "Reservations")), v))
}
