package handlers

import (
	"encoding/csv"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
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

// statementGroup is ledGroup for a group's statement, which an admin also
// reads for a deleted group: its lines keep its id. A deleted group comes
// back with the name it had and deleted true (it has no members, leads or
// running workbenches any more).
func (h *Handler) statementGroup(c *gin.Context) (g *models.Group, deleted bool, ok bool) {
	if currentUser(c).IsAdmin() {
		id, err := strconv.ParseInt(c.Param("id"), 10, 64)
		if err == nil {
			if _, err := h.store.GroupByID(c.Request.Context(), id); errors.Is(err, models.ErrNotFound) {
				dg, err := h.store.DeletedGroupByID(c.Request.Context(), id)
				if err != nil {
					h.fail(c, err)
					return nil, false, false
				}
				return &models.Group{ID: dg.ID, Name: dg.Name}, true, true
			}
		}
	}
	g, ok = h.ledGroup(c)
	return g, false, ok
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
	g, deleted, ok := h.statementGroup(c)
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
	name := g.Name
	if deleted {
		name = deletedGroupLabel(c, g.Name, g.ID)
	}
	v := templates.GroupBillingView{Group: name, GroupBy: groupBy, Total: h.amountText(ctx, total),
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
	charged := chargedTotal(items)
	for _, it := range items {
		secs += it.GPUSeconds
		v.Rows = append(v.Rows, h.billingRow(c, groupBy, it, charged))
	}
	v.TotalHours = gpuHoursText(secs)
	v.TotalPreemptible = h.preemptibleText(ctx, preemptibleTotal(items))
	if v.Month.Current && !deleted {
		if v.Running, err = h.groupRunning(c, g.ID, now); err != nil {
			h.fail(c, err)
			return
		}
	}
	if v.Month.Current {
		// A group deleted this month may still be owed the hour its
		// members were in when it was deleted (billed at the next pass).
		pending, err := h.groupAccruing(c, g)
		if err != nil {
			h.log.Warn("group's unbilled usage", "group", g.Name, "err", err)
		} else if pending > 0 {
			v.Pending = h.amountText(ctx, pending)
		}
	}
	h.render(c, http.StatusOK, templates.GroupBillingPage(h.page(c, trc(c, "Group %s", name)), v))
}

// groupIdleMark is how long a member's workbench may sit idle before the
// lead's list marks it: half the default idle timeout's hour.
const groupIdleMark = 30 * time.Minute

// groupRunning lists the running workbenches of the group's members for
// its leads, longest idle first: who holds GPUs idle is what a lead looks
// for (they had to ask an admin).
func (h *Handler) groupRunning(c *gin.Context, groupID int64, now time.Time) ([]templates.GroupRunningRow, error) {
	ctx := c.Request.Context()
	wbs, err := h.store.GroupMembersRunning(ctx, groupID)
	if err != nil || len(wbs) == 0 {
		return nil, err
	}
	flavors, err := h.store.ListFlavors(ctx, false)
	if err != nil {
		return nil, err
	}
	flavorName := make(map[int64]string, len(flavors))
	for _, f := range flavors {
		flavorName[f.ID] = f.Name
	}
	type running struct {
		row  templates.GroupRunningRow
		idle time.Duration
	}
	list := make([]running, 0, len(wbs))
	for i := range wbs {
		wb := &wbs[i]
		since := now
		if wb.StartedAt != nil {
			since = *wb.StartedAt
		}
		active := since
		if wb.LastActivityAt != nil && wb.LastActivityAt.After(active) {
			active = *wb.LastActivityAt
		}
		idle := max(now.Sub(active), 0)
		list = append(list, running{idle: idle, row: templates.GroupRunningRow{Owner: wb.OwnerName, Name: wb.Name,
			Flavor: flavorName[wb.ShapeFlavorID()], RunningFor: minutesText(ctx, now.Sub(since)), IdleFor: minutesText(ctx, idle),
			Idle: idle >= groupIdleMark}})
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].idle > list[j].idle })
	rows := make([]templates.GroupRunningRow, len(list))
	for i, r := range list {
		rows[i] = r.row
	}
	return rows, nil
}

// groupAccruing is what this month's members have run up while in this
// group that no line holds yet: the statement had said "nothing charged"
// while the group's workbenches ran. Those who left this month count for
// their time in it, as their lines will.
func (h *Handler) groupAccruing(c *gin.Context, g *models.Group) (int64, error) {
	ctx := c.Request.Context()
	ids, err := h.store.GroupMembersSince(ctx, g.ID, models.MonthStart(time.Now()))
	if err != nil {
		return 0, err
	}
	return h.wbs.Billing().AccruingForGroup(ctx, g.ID, ids)
}

// groupBillingCSV: GET /groups/:id/billing.csv?month&group_by — the same
// rows as CSV, amounts exact.
func (h *Handler) groupBillingCSV(c *gin.Context) {
	if err := onlyQueryParams(c, "month", "group_by"); err != nil {
		h.fail(c, err)
		return
	}
	g, deleted, ok := h.statementGroup(c)
	if !ok {
		return
	}
	// The group column is the key the admin's CSV by group gives it.
	name := g.Name
	if deleted {
		name = models.DeletedGroupKey(g.Name, g.ID)
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
	_ = w.Write([]string{"month", "group", groupBy, "gpu_seconds", "gpu_hours", "amount", "amount_micros", "currency", "preemptible_micros"})
	for _, it := range items {
		_ = w.Write([]string{month.Format("2006-01"), csvText(name), csvText(it.Key), strconv.FormatInt(it.GPUSeconds, 10), gpuHoursText(it.GPUSeconds),
			pricing.Micros(it.AmountMicros).Exact(), strconv.FormatInt(it.AmountMicros, 10), h.cfg.Currency, strconv.FormatInt(it.PreemptibleMicros, 10)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		h.log.Warn("group billing csv", "group", g.Name, "err", err)
	}
}
