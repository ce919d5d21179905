package handlers

import (
	"encoding/csv"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/orchestrator"
)

// Reservation administration (issue 12 §4): the "bill reserved-but-unused
// time" setting, the weekly caps on booking, and the report of
// reserved-but-unused unit-hours per user (JSON or CSV). Admin, sudo;
// changes audited. There is no page yet (API only).

// apiReservationSettings: GET /api/v1/admin/reservation-settings.
func (h *Handler) apiReservationSettings(c *gin.Context) {
	on, err := h.store.ReservationBillUnused(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, APIReservationSettings{BillUnused: on})
}

// apiReservationSettingsPut: PUT /api/v1/admin/reservation-settings
// {bill_unused}. It applies to bookings settled from then on.
func (h *Handler) apiReservationSettingsPut(c *gin.Context) {
	var body APIReservationSettings
	if !h.bindJSON(c, &body) {
		return
	}
	ctx := c.Request.Context()
	before, err := h.store.ReservationBillUnused(ctx)
	if err != nil {
		h.fail(c, err)
		return
	}
	err = h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		return auditRec("reservation.settings", "bill_unused", APIReservationSettings{BillUnused: before}, body),
			tx.SetReservationBillUnused(ctx, body.BillUnused)
	})
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, body)
}

// apiReservationCaps: GET /api/v1/admin/reservation-caps.
func (h *Handler) apiReservationCaps(c *gin.Context) {
	caps, err := h.store.ReservationCaps(c.Request.Context())
	if err != nil {
		h.fail(c, err)
		return
	}
	out := make([]APIReservationCap, 0, len(caps))
	for _, r := range caps {
		out = append(out, APIReservationCap{Scope: r.Scope, SubjectID: r.SubjectID, UnitHoursPerWeek: r.UnitHoursPerWeek, UpdatedBy: r.UpdatedBy, UpdatedAt: r.UpdatedAt})
	}
	c.JSON(http.StatusOK, list(out))
}

// apiReservationCapPut: PUT /api/v1/admin/reservation-caps/{default|user|group}/{name}
// {unit_hours_per_week: N, or null to remove the scope's cap}; the name
// is a username or a group name ("-" for the default).
func (h *Handler) apiReservationCapPut(c *gin.Context) {
	var body struct {
		UnitHoursPerWeek *int64 `json:"unit_hours_per_week"`
	}
	if !h.bindJSON(c, &body) {
		return
	}
	ctx := c.Request.Context()
	scope, name := c.Param("scope"), c.Param("name")
	var id int64
	switch scope {
	case models.ScopeUser:
		u, err := h.store.UserByUsername(ctx, name)
		if err != nil {
			h.fail(c, &models.ValidationError{Field: "name", Message: "no user " + strconv.Quote(name)})
			return
		}
		id = u.ID
	case models.ScopeGroup:
		g, err := h.store.GroupByName(ctx, name)
		if err != nil {
			h.fail(c, &models.ValidationError{Field: "name", Message: "no group " + strconv.Quote(name)})
			return
		}
		id = g.ID
	}
	err := h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		return auditRec("reservation.cap", scope+":"+name, nil, body),
			tx.SetReservationCap(ctx, scope, id, body.UnitHoursPerWeek, currentUser(c).Username)
	})
	if err != nil {
		h.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// apiReservedUnused: GET /api/v1/admin/reservations/unused?from=&to=
// [&format=csv] — per user, the unit-hours booked over the period (dates
// YYYY-MM-DD or RFC 3339; default: the last 30 days), used and unused, and
// what was billed for the unused time.
func (h *Handler) apiReservedUnused(c *gin.Context) {
	ctx := c.Request.Context()
	now := h.wbs.Now()
	from, to := now.AddDate(0, 0, -30), now
	for _, p := range []struct {
		name string
		t    *time.Time
	}{{"from", &from}, {"to", &to}} {
		text := c.Query(p.name)
		if text == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339, text)
		if err != nil {
			if t, err = time.Parse("2006-01-02", text); err != nil {
				h.fail(c, &models.ValidationError{Field: p.name, Message: "a date YYYY-MM-DD or an RFC 3339 time"})
				return
			}
		}
		*p.t = t.UTC()
	}
	if !to.After(from) {
		h.fail(c, &models.ValidationError{Field: "to", Message: "must be after from"})
		return
	}
	rows, err := h.wbs.ReservedUnused(ctx, from, to)
	if err != nil {
		h.fail(c, err)
		return
	}
	bill, err := h.store.ReservationBillUnused(ctx)
	if err != nil {
		h.fail(c, err)
		return
	}
	items := make([]APIReservedUnused, 0, len(rows))
	for _, r := range rows {
		name := strconv.FormatInt(r.UserID, 10)
		if u, err := h.store.UserByID(ctx, r.UserID); err == nil {
			name = u.Username
		}
		items = append(items, apiReservedUnused(name, r))
	}
	if c.Query("format") == "csv" {
		csvHeaders(c, "reserved-unused-"+from.Format("2006-01-02")+"-"+to.Format("2006-01-02")+".csv")
		w := csv.NewWriter(c.Writer)
		_ = w.Write([]string{"user", "reservations", "reserved_unit_hours", "used_unit_hours", "unused_unit_hours", "unused_unit_seconds",
			"billed", "billed_micros", "currency", "unsettled"})
		for _, it := range items {
			_ = w.Write([]string{csvText(it.User), strconv.Itoa(it.Reservations), it.ReservedUnitHours, it.UsedUnitHours, it.UnusedUnitHours,
				strconv.FormatInt(it.UnusedUnitSeconds, 10), pricing.Micros(it.BilledMicros).Exact(), strconv.FormatInt(it.BilledMicros, 10),
				h.cfg.Currency, strconv.Itoa(it.Unsettled)})
		}
		w.Flush()
		return
	}
	c.JSON(http.StatusOK, APIReservedUnusedReport{From: from, To: to, BillUnused: bill, Items: items})
}

func apiReservedUnused(user string, r orchestrator.UnusedRow) APIReservedUnused {
	return APIReservedUnused{User: user, Reservations: r.Reservations, ReservedUnitHours: hoursText(r.ReservedUnitSecs),
		UsedUnitHours: hoursText(r.UsedUnitSecs), UnusedUnitHours: hoursText(r.UnusedUnitSecs), UnusedUnitSeconds: r.UnusedUnitSecs,
		BilledMicros: r.BilledMicros, Unsettled: r.UnsettledBookings}
}

// hoursText is unit-seconds as hours with two decimals ("1.50").
func hoursText(secs int64) string {
	return strconv.FormatInt(secs/3600, 10) + "." + strconv.FormatInt(100+secs%3600*100/3600, 10)[1:]
}
