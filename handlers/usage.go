package handlers

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
)

// usageRange reads ?from&to (RFC 3339 or YYYY-MM-DD; default: this month;
// with to alone, from is the start of to's month).
//
// Both must be on the hour. The ledger splits lines at the hour and a
// line is counted by when its period starts, so a window inside an hour
// counted whole lines that began in it and none that began a second
// before: 221 GPU-seconds in a 60 s window. On the hour, a window holds
// exactly the lines of its time; a part of a line is never billed alone.
func usageRange(c *gin.Context) (time.Time, time.Time, error) {
	parse := func(field, v string) (time.Time, bool, error) {
		if v == "" {
			return time.Time{}, false, nil
		}
		for _, layout := range []string{time.RFC3339, "2006-01-02", "2006-01"} {
			if t, err := time.Parse(layout, v); err == nil {
				t = t.UTC()
				if !t.Truncate(time.Hour).Equal(t) {
					return t, true, &models.ValidationError{Field: field, Message: "must be on the hour in UTC (ledger lines are split at each hour and counted by when they start)"}
				}
				return t, true, nil
			}
		}
		return time.Time{}, false, &models.ValidationError{Field: field, Message: "use YYYY-MM-DD, YYYY-MM or an RFC 3339 time"}
	}
	from, hasFrom, err := parse("from", c.Query("from"))
	if err != nil {
		return from, from, err
	}
	to, hasTo, err := parse("to", c.Query("to"))
	if err != nil {
		return from, to, err
	}
	start := models.MonthStart(time.Now())
	switch {
	case !hasFrom && hasTo:
		from = models.MonthStart(to.Add(-time.Nanosecond))
	case !hasFrom:
		from = start
	}
	if !hasTo {
		to = start.AddDate(0, 1, 0)
	}
	if !to.After(from) {
		return from, to, &models.ValidationError{Field: "to", Message: "must be after from"}
	}
	return from, to, nil
}

// apiUsage: GET /api/v1/usage?from&to&group_by=user|group|gpu_model|workbench
// &user=NAME (admins). Users see their own usage only.
func (h *Handler) apiUsage(c *gin.Context) {
	ctx := c.Request.Context()
	from, to, err := usageRange(c)
	if err != nil {
		h.fail(c, err)
		return
	}
	groupBy := c.DefaultQuery("group_by", "workbench")
	if !models.ValidGrouping(groupBy) {
		h.fail(c, &models.ValidationError{Field: "group_by", Message: "must be user, group, gpu_model, workbench or resource"})
		return
	}
	userID, ok := h.usageUserID(c)
	if !ok {
		return
	}
	items, total, err := h.store.UsageSummary(ctx, from, to, groupBy, userID)
	if err != nil {
		h.fail(c, err)
		return
	}
	energy, err := h.energyFor(ctx, from, to, groupBy, userID)
	if err != nil {
		h.fail(c, err)
		return
	}
	items = withEnergyKeys(items, energy)
	for i := range items {
		items[i].EnergyMJ = energy.mJ[items[i].Key]
		if energy.priced {
			cost := energy.cost(items[i].EnergyMJ)
			items[i].EnergyCostMicros = &cost
		}
	}
	c.JSON(http.StatusOK, APIUsage{From: from.Format(time.RFC3339), To: to.Format(time.RFC3339), GroupBy: groupBy,
		Items: nonNil(items), TotalMicros: total, Currency: h.cfg.Currency})
}

// usageUserID is whose usage a request of /api/v1/usage or /usage/lines
// reads (0: everyone's): the caller's own; an admin's everyone's, or with
// ?user=NAME that user's. A user naming another is refused (403), an
// unknown name is 404 user_not_found; either is answered and ok is false.
func (h *Handler) usageUserID(c *gin.Context) (userID int64, ok bool) {
	me := currentUser(c)
	name := c.Query("user")
	switch {
	case !me.IsAdmin() && name != "" && name != me.Username:
		h.fail(c, errForbidden)
		return 0, false
	case !me.IsAdmin():
		return me.ID, true
	case name == "":
		return 0, true
	}
	u, err := h.store.UserByUsername(c.Request.Context(), name)
	if errors.Is(err, models.ErrNotFound) {
		// The generic not_found is worded for a page ("go back to the
		// list"); a script is told which parameter named no one.
		err = newError(http.StatusNotFound, "user_not_found",
			"user: no user is named "+strconv.Quote(name)+"; GET /api/v1/admin/users lists them")
	}
	if err != nil {
		h.fail(c, err)
		return 0, false
	}
	return u.ID, true
}
