package handlers

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/templates"
)

// groupStatementGroupings are the ways a group's statement is cut, in tab
// order (by group is the admin's view across groups).
func groupStatementGroupings(c *gin.Context) []templates.ChoiceLink {
	var out []templates.ChoiceLink
	for _, o := range billingGroupings(c) {
		if o.Value != "group" {
			out = append(out, o)
		}
	}
	return out
}

// ledGroup is the group of the :id parameter when the caller leads it or
// is an admin. Anyone else gets the answer of a missing group, so group
// ids cannot be probed.
func (h *Handler) ledGroup(c *gin.Context) (*models.Group, bool) {
	g, ok := h.groupParam(c)
	if !ok {
		return nil, false
	}
	u := currentUser(c)
	if !u.IsAdmin() {
		lead, err := h.store.IsGroupLead(c.Request.Context(), g.ID, u.ID)
		if err != nil {
			h.fail(c, err)
			return nil, false
		}
		if !lead {
			h.fail(c, models.ErrNotFound)
			return nil, false
		}
	}
	return g, true
}

// groupStatementQuery reads ?month and ?group_by of a group's statement.
func groupStatementQuery(c *gin.Context, now time.Time) (time.Time, string, error) {
	month, err := parseMonth(c.Query("month"), now)
	if err != nil {
		return month, "", err
	}
	groupBy := c.DefaultQuery("group_by", "user")
	if groupBy == "group" || !models.ValidGrouping(groupBy) {
		return month, "", &models.ValidationError{Field: "group_by", Message: "must be user, gpu_model, workbench or resource"}
	}
	return month, groupBy, nil
}

// groupBilling: GET /groups/:id/billing?month=YYYY-MM&group_by=user|
// workbench|resource|gpu_model — what a group's lines cost in a month, for
// its leads (SPEC §1: statements per group for team leads) and admins.
// Lines count for the group they were billed to (a member's first group).
func (h *Handler) groupBilling(c *gin.Context) {
	g, ok := h.ledGroup(c)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	now := time.Now().UTC()
	month, groupBy, err := groupStatementQuery(c, now)
	if err != nil {
		h.fail(c, err)
		return
	}
	items, total, err := h.store.GroupUsageSummary(ctx, month, month.AddDate(0, 1, 0), groupBy, g.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	path := fmt.Sprintf("/groups/%d/billing", g.ID)
	q := url.Values{"month": {month.Format("2006-01")}, "group_by": {groupBy}}
	v := templates.GroupBillingView{Group: g.Name, GroupBy: groupBy, Total: h.amountText(ctx, total),
		Month:  monthNav(path, month, now, url.Values{"group_by": {groupBy}}),
		CSVURL: fmt.Sprintf("/groups/%d/billing.csv?", g.ID) + q.Encode()}
	for _, o := range groupStatementGroupings(c) {
		oq := url.Values{"month": {month.Format("2006-01")}, "group_by": {o.Value}}
		o.Href, o.Active = path+"?"+oq.Encode(), o.Value == groupBy
		if o.Active {
			v.GroupLabel = o.Label
		}
		v.Groupings = append(v.Groupings, o)
	}
	var secs int64
	for _, it := range items {
		secs += it.GPUSeconds
		v.Rows = append(v.Rows, h.billingRow(c, groupBy, it, total))
	}
	v.TotalHours = gpuHoursText(secs)
	h.render(c, http.StatusOK, templates.GroupBillingPage(h.page(c, trc(c, "Group %s", g.Name)), v))
}

// groupBillingCSV: GET /groups/:id/billing.csv?month&group_by — the same
// rows as CSV, amounts exact.
func (h *Handler) groupBillingCSV(c *gin.Context) {
	if err := onlyQueryParams(c, "month", "group_by"); err != nil {
		h.fail(c, err)
		return
	}
	g, ok := h.ledGroup(c)
	if !ok {
		return
	}
	month, groupBy, err := groupStatementQuery(c, time.Now())
	if err != nil {
		h.fail(c, err)
		return
	}
	items, _, err := h.store.GroupUsageSummary(c.Request.Context(), month, month.AddDate(0, 1, 0), groupBy, g.ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	csvHeaders(c, fmt.Sprintf("group-%d-%s-by-%s.csv", g.ID, month.Format("2006-01"), groupBy))
	w := csv.NewWriter(c.Writer)
	_ = w.Write([]string{"month", "group", groupBy, "gpu_seconds", "gpu_hours", "amount", "amount_micros", "currency"})
	for _, it := range items {
		_ = w.Write([]string{month.Format("2006-01"), csvText(g.Name), csvText(it.Key), strconv.FormatInt(it.GPUSeconds, 10), gpuHoursText(it.GPUSeconds),
			pricing.Micros(it.AmountMicros).Exact(), strconv.FormatInt(it.AmountMicros, 10), h.cfg.Currency})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		h.log.Warn("group billing csv", "group", g.Name, "err", err)
	}
}
