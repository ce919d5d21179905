package handlers

import (
	"context"
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
// changes audited. The admin page /admin/reservations
// (admin_reservations_page.go) shares these functions.

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
	if err := h.setReservationBillUnused(c, body.BillUnused); err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, body)
}

// setReservationBillUnused stores the "bill reserved-but-unused time"
// setting with its audit row in the same transaction (the API and the
// admin page).
func (h *Handler) setReservationBillUnused(c *gin.Context, on bool) error {
	ctx := c.Request.Context()
	before, err := h.store.ReservationBillUnused(ctx)
	if err != nil {
		return err
	}
	err = h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		return auditRec("reservation.settings", "bill_unused", APIReservationSettings{BillUnused: before}, APIReservationSettings{BillUnused: on}),
			tx.SetReservationBillUnused(ctx, on)
	})
	if err == nil && on != before {
		// What bookings set aside of budgets comes or goes with it: the
		// budgets' stops move now, not at the next billing pass.
		h.wbs.BudgetsChanged()
	}
	return err
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
	var body reservationCapBody
	if !h.bindJSON(c, &body) {
		return
	}
	if err := h.setReservationCap(c, apiScope(c.Param("scope")), c.Param("name"), body.UnitHoursPerWeek); err != nil {
		h.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// reservationCapBody is a cap change as the API takes it and the audit
// row records it (nil: no cap).
type reservationCapBody struct {
	UnitHoursPerWeek *int64 `json:"unit_hours_per_week"`
}

// setReservationCap resolves name (a username or a group name; ignored
// for the default scope) and stores scope's cap, nil removing it, with its
// audit row in the same transaction (the API and the admin page). An
// unknown name is a ValidationError on "name".
func (h *Handler) setReservationCap(c *gin.Context, scope, name string, hours *int64) error {
	ctx := c.Request.Context()
	var id int64
	switch scope {
	case models.ScopeUser:
		u, err := h.liveUserNamed(ctx, name)
		if err != nil {
			return &models.ValidationError{Field: "name", Message: "no user " + strconv.Quote(name)}
		}
		id = u.ID
	case models.ScopeGroup:
		g, err := h.store.GroupByName(ctx, name)
		if err != nil {
			return &models.ValidationError{Field: "name", Message: "no group " + strconv.Quote(name)}
		}
		id = g.ID
	}
	return h.audited(c, func(tx *models.Store) (models.AuditRecord, error) {
		return auditRec("reservation.cap", scope+":"+name, nil, reservationCapBody{UnitHoursPerWeek: hours}),
			tx.SetReservationCap(ctx, scope, id, hours, currentUser(c).Username)
	})
}

// apiReservedUnused: GET /api/v1/admin/reservations/unused?from=&to=
// [&format=csv] — per user, the unit-hours booked over the period (dates
// YYYY-MM-DD or RFC 3339; default: the last 30 days), used and unused, and
// what was billed for the unused time.
func (h *Handler) apiReservedUnused(c *gin.Context) {
	format := c.Query("format")
	if format != "" && format != "csv" && format != "json" { // ?format=xml answered JSON
		h.fail(c, newError(http.StatusBadRequest, "invalid_format", "format: csv or json"))
		return
	}
	rep, err := h.reservedUnusedReport(c.Request.Context(), c.Query("from"), c.Query("to"))
	if err != nil {
		h.fail(c, err)
		return
	}
	if format == "csv" {
		h.writeReservedUnusedCSV(c, rep)
		return
	}
	c.JSON(http.StatusOK, rep)
}

// reservedUnusedReport builds the reserved-but-unused report over
// [from, to) given as text (empty: the last 30 days up to now); a bad date
// is a ValidationError on its field. The API, its CSV and the admin page.
func (h *Handler) reservedUnusedReport(ctx context.Context, fromText, toText string) (APIReservedUnusedReport, error) {
	now := h.wbs.Now()
	from, to := now.AddDate(0, 0, -30), now
	for _, p := range []struct {
		name, text string
		t          *time.Time
	}{{"from", fromText, &from}, {"to", toText, &to}} {
		if p.text == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339, p.text)
		if err != nil {
			if t, err = time.Parse("2006-01-02", p.text); err != nil {
				return APIReservedUnusedReport{}, &models.ValidationError{Field: p.name, Message: "a date YYYY-MM-DD or an RFC 3339 time"}
			}
		}
		*p.t = t.UTC()
	}
	if !to.After(from) {
		return APIReservedUnusedReport{}, &models.ValidationError{Field: "to", Message: "must be after from"}
	}
	rows, err := h.wbs.ReservedUnused(ctx, from, to)
	if err != nil {
		return APIReservedUnusedReport{}, err
	}
	bill, err := h.store.ReservationBillUnused(ctx)
	if err != nil {
		return APIReservedUnusedReport{}, err
	}
	items := make([]APIReservedUnused, 0, len(rows))
	for _, r := range rows {
		name := strconv.FormatInt(r.UserID, 10)
		if u, err := h.store.UserByID(ctx, r.UserID); err == nil {
			name = u.Username
		}
		items = append(items, apiReservedUnused(name, r))
	}
	return APIReservedUnusedReport{From: from, To: to, BillUnused: bill, Items: items}, nil
}

// writeReservedUnusedCSV answers rep as a CSV download.
func (h *Handler) writeReservedUnusedCSV(c *gin.Context, rep APIReservedUnusedReport) {
	csvHeaders(c, "reserved-unused-"+rep.From.Format("2006-01-02")+"-"+rep.To.Format("2006-01-02")+".csv")
	w := csv.NewWriter(c.Writer)
	_ = w.Write([]string{"user", "reservations", "reserved_unit_hours", "used_unit_hours", "unused_unit_hours", "unused_unit_seconds",
		"billed", "billed_micros", "currency", "unsettled"})
	for _, it := range rep.Items {
		_ = w.Write([]string{csvText(it.User), strconv.Itoa(it.Reservations), it.ReservedUnitHours, it.UsedUnitHours, it.UnusedUnitHours,
			strconv.FormatInt(it.UnusedUnitSeconds, 10), pricing.Micros(it.BilledMicros).Exact(), strconv.FormatInt(it.BilledMicros, 10),
			h.cfg.Currency, strconv.Itoa(it.Unsettled)})
	}
	w.Flush()
}

func apiReservedUnused(user string, r orchestrator.UnusedRow) APIReservedUnused {
	return APIReservedUnused{User: user, Reservations: r.Reservations, ReservedUnitHours: hoursText(r.ReservedUnitSecs),
		UsedUnitHours: hoursText(r.UsedUnitSecs), UnusedUnitHours: hoursText(r.UnusedUnitSecs), UnusedUnitSeconds: r.UnusedUnitSecs,
		BilledMicros: r.BilledMicros, Unsettled: r.UnsettledBookings}
}

// hoursText is unit-seconds as hours with two decimals ("1.50").
func hoursText(secs int64) string {
	// Rounded to the hundredth, as the ledger line's note words the same
	// unused time (orchestrator's unitHours): cut off, 132 s read 0.03
	// here and 61 s read 0.02 on the bill.
	hundredths := (secs*100 + 1800) / 3600
	return strconv.FormatInt(hundredths/100, 10) + "." + strconv.FormatInt(100+hundredths%100, 10)[1:]
}
