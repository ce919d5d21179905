package handlers

import (
	"context"
	"fmt"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/handlers/proxy"
	"workbench/models"
	"workbench/orchestrator"
	"workbench/templates"
)

// deadlineSoon is how close a stop must be to be shown as a warning.
const deadlineSoon = 15 * time.Minute

// deadlineView tells the pages when the culler will stop a workbench.
func (h *Handler) deadlineView(ctx context.Context, wb *models.Workbench) templates.DeadlineView {
	if wb.State != models.StateRunning {
		return templates.DeadlineView{}
	}
	return deadlineText(wb.ID, h.wbs.Deadlines(ctx, wb), time.Now())
}

// deadlineText words the deadlines for people: "idle 42 min — stops at
// 14:10 UTC unless used".
func deadlineText(id string, d orchestrator.Deadlines, now time.Time) templates.DeadlineView {
	v := templates.DeadlineView{WorkbenchID: id, CanExtend: d.CanExtend, ExtendRefusal: d.ExtendRefusal}
	if !d.IdleStopAt.IsZero() {
		v.Idle = fmt.Sprintf("idle %s — stops at %s unless used", minutesText(d.IdleFor), clockText(d.IdleStopAt, now))
		v.Soon = d.IdleStopAt.Sub(now) <= deadlineSoon
	}
	if !d.RuntimeStopAt.IsZero() {
		v.Runtime = fmt.Sprintf("maximum runtime (%s %s) ends at %s", d.RuntimeWhose, durationText(d.RuntimeLimit), clockText(d.RuntimeStopAt, now))
		v.Soon = v.Soon || d.RuntimeStopAt.Sub(now) <= deadlineSoon
	}
	return v
}

// minutesText is "42 min", "3 h 5 min" or "less than a minute".
func minutesText(d time.Duration) string {
	m := int64(d / time.Minute)
	switch {
	case m < 1:
		return "less than a minute"
	case m < 60:
		return fmt.Sprintf("%d min", m)
	case m%60 == 0:
		return fmt.Sprintf("%d h", m/60)
	default:
		return fmt.Sprintf("%d h %d min", m/60, m%60)
	}
}

// durationText is a runtime limit: "4 h" or "90 min".
func durationText(d time.Duration) string {
	if d%time.Hour == 0 {
		return fmt.Sprintf("%d h", d/time.Hour)
	}
	return minutesText(d)
}

// clockText is "14:10 UTC" today, else "Mar 3 14:10 UTC" (pages show UTC).
func clockText(t, now time.Time) string {
	t, now = t.UTC(), now.UTC()
	if t.Format("2006-01-02") == now.Format("2006-01-02") {
		return t.Format("15:04 UTC")
	}
	return t.Format("Jan 2 15:04 UTC")
}

// budgetWarning is the banner of monthly limits at 80% or more, for the
// pages where users work. A failure to read usage only loses the banner.
func (h *Handler) budgetWarning(c *gin.Context) *templates.BudgetWarning {
	u := currentUser(c)
	if u == nil {
		return nil
	}
	st, err := h.quotaStatusOf(c, u)
	if err != nil {
		if !proxy.ClientGone(c.Request, err) {
			h.log.Warn("budget banner", "user", u.Username, "err", err)
		}
		return nil
	}
	b := &templates.BudgetWarning{Full: st.LimitReached != ""}
	if b.Full {
		b.Messages = append(b.Messages, st.LimitReached+": new launches are refused until next month or until an administrator raises your quota.")
	}
	if l := st.Quota.BudgetPerMonthMicros; l != nil && *l > 0 && float64(st.MonthSpend) >= warnFraction*float64(*l) && st.MonthSpend < *l {
		b.Messages = append(b.Messages, fmt.Sprintf("You have spent %s of your monthly budget of %s (%d%%).",
			h.amountText(st.MonthSpend), h.amountText(*l), st.MonthSpend*100 / *l))
	}
	if l := st.Quota.GPUHoursPerMonth; l != nil && *l > 0 && float64(st.MonthGPUSecs) >= warnFraction*float64(*l*3600) && st.MonthGPUSecs < *l*3600 {
		b.Messages = append(b.Messages, fmt.Sprintf("You have used %s of your %d monthly GPU-hours (%d%%).",
			gpuHoursText(st.MonthGPUSecs), *l, st.MonthGPUSecs*100/(*l*3600)))
	}
	if len(b.Messages) == 0 {
		return nil
	}
	return b
}

// workPage is h.page for the pages where users work: with the budget banner.
func (h *Handler) workPage(c *gin.Context, title string) templates.Page {
	p := h.page(c, title)
	p.Budget = h.budgetWarning(c)
	return p
}
