package handlers

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/handlers/proxy"
	"workbench/models"
	"workbench/orchestrator"
	"workbench/templates"
	"workbench/templates/i18n"
)

// deadlineSoon is how close a stop must be to be shown as a warning.
const deadlineSoon = 15 * time.Minute

// deadlineView tells the pages when the culler will stop a workbench.
// owner names the workbench's owner for a reader who is someone else (an
// admin): a quota's limit is then theirs, not "your quota's".
func (h *Handler) deadlineView(ctx context.Context, wb *models.Workbench, owner string) templates.DeadlineView {
	if wb.State != models.StateRunning {
		return templates.DeadlineView{}
	}
	return deadlineText(ctx, wb.ID, h.wbs.Deadlines(ctx, wb), time.Now(), owner)
}

// deadlineText words the deadlines for people: "idle 42 min — stops at
// 14:10 UTC unless used".
func deadlineText(ctx context.Context, id string, d orchestrator.Deadlines, now time.Time, owner string) templates.DeadlineView {
	v := templates.DeadlineView{WorkbenchID: id, CanExtend: d.CanExtend}
	if d.ExtendRefusal != "" {
		// Shown where "+1 h" would be, before anyone asked: it says why
		// there is none (it read like something had gone wrong), in the
		// reader's language.
		v.ExtendRefusal = i18n.T(ctx, "no +1 h: %s", i18n.ReasonClause(ctx, d.ExtendRefusal))
	}
	if !d.IdleStopAt.IsZero() {
		v.Idle = i18n.T(ctx, "idle %s — stops at %s unless used", minutesText(ctx, d.IdleFor), clockText(ctx, d.IdleStopAt, now))
		v.Soon = d.IdleStopAt.Sub(now) <= deadlineSoon
	}
	if !d.RuntimeStopAt.IsZero() {
		whose := d.RuntimeWhose
		if k, ok := runtimeWhose[whose]; ok {
			whose = i18n.T(ctx, k)
		}
		if owner != "" && d.RuntimeWhose == "your quota's" {
			whose = i18n.T(ctx, "%s's quota's", owner)
		}
		if ext := d.RuntimeExtended; ext > 0 {
			// "the flavor's 5 h" read as false of a 2 h flavor extended
			// three times.
			v.Runtime = i18n.T(ctx, "maximum runtime (%s %s, extended by %s) ends at %s", whose, durationText(ctx, d.RuntimeLimit-ext),
				durationText(ctx, ext), clockText(ctx, d.RuntimeStopAt, now))
		} else {
			v.Runtime = i18n.T(ctx, "maximum runtime (%s %s) ends at %s", whose, durationText(ctx, d.RuntimeLimit), clockText(ctx, d.RuntimeStopAt, now))
		}
		v.Soon = v.Soon || d.RuntimeStopAt.Sub(now) <= deadlineSoon
	}
	if !d.BudgetStopAt.IsZero() {
		switch {
		case d.BudgetStopForBookings && owner != "":
			v.Budget = i18n.T(ctx, "at %s what is left of %s's monthly budget beside their bookings' unused time is spent: it stops then", clockText(ctx, d.BudgetStopAt, now), owner)
		case d.BudgetStopForBookings:
			v.Budget = i18n.T(ctx, "at %s what is left of your monthly budget beside your bookings' unused time is spent: it stops then", clockText(ctx, d.BudgetStopAt, now))
		case owner != "":
			v.Budget = i18n.T(ctx, "%s's monthly limit is reached at %s: it stops then", owner, clockText(ctx, d.BudgetStopAt, now))
		default:
			v.Budget = i18n.T(ctx, "your monthly limit is reached at %s: it stops then", clockText(ctx, d.BudgetStopAt, now))
		}
		v.Soon = v.Soon || d.BudgetStopAt.Sub(now) <= deadlineSoon
	}
	return v
}

// runtimeWhose are the catalog keys of orchestrator.RuntimeRule.Limit's
// "whose" words.
var runtimeWhose = map[string]string{"the flavor's": i18n.Key("the flavor's"), "your quota's": i18n.Key("your quota's")}

// minutesText is "42 min", "3 h 5 min" or "less than a minute" in the
// reader's language ("42 分钟", "3 小时 5 分钟").
func minutesText(ctx context.Context, d time.Duration) string {
	m := int64(d / time.Minute)
	switch {
	case m < 1:
		return i18n.T(ctx, "less than a minute")
	case m < 60:
		return i18n.T(ctx, "%d min", m)
	case m%60 == 0:
		return i18n.T(ctx, "%d h", m/60)
	default:
		return i18n.T(ctx, "%d h %d min", m/60, m%60)
	}
}

// durationText is a runtime limit: "4 h" or "90 min".
func durationText(ctx context.Context, d time.Duration) string {
	if d%time.Hour == 0 {
		return i18n.T(ctx, "%d h", int64(d/time.Hour))
	}
	return minutesText(ctx, d)
}

// clockText is "14:10 UTC" today, else the date and time as every other
// time on the pages is written (templates.WhenIn: "2026-03-03 14:10 UTC",
// "2026年3月3日 14:10 UTC"): a deadline read "Mar 3 14:10" beside a
// "Started 2026-03-02 22:17". Pages show UTC, and beside it the time in
// the reader's zone where they chose one (templates.ClockIn).
func clockText(ctx context.Context, t, now time.Time) string {
	t, now = t.UTC(), now.UTC()
	if t.Format("2006-01-02") == now.Format("2006-01-02") {
		return templates.ClockIn(ctx, t)
	}
	return templates.WhenIn(ctx, &t)
}

// budgetWarning is the banner of monthly limits at 80% or more, for the
// pages where users work. A failure to read usage only loses the banner.
func (h *Handler) budgetWarning(c *gin.Context) *templates.BudgetWarning {
	return h.budgetWarningFor(c.Request, currentUser(c))
}

// budgetWarningFor is budgetWarning of u off gin (the not-running page
// under /wb/), in the language of r's context.
func (h *Handler) budgetWarningFor(r *http.Request, u *models.User) *templates.BudgetWarning {
	return h.budgetWarningOf(r, u, true)
}

// budgetWarningOf is budgetWarningFor, with the home-storage sentence
// only when storage is set (a workbench's page says it in a notice of its
// own).
func (h *Handler) budgetWarningOf(r *http.Request, u *models.User, storage bool) *templates.BudgetWarning {
	if u == nil {
		return nil
	}
	ctx := r.Context()
	st, err := h.quotaStatusIn(ctx, u)
	if err != nil {
		if !proxy.ClientGone(r, err) {
			h.log.Warn("budget banner", "user", u.Username, "err", err)
		}
		return nil
	}
	amount := h.amountFor(ctx)
	// What is left, spent and set aside is compared against the budget,
	// and a refusal may follow: written as the refusal writes them.
	atMost, atLeast := h.limitAmountsFor(ctx)
	b := &templates.BudgetWarning{Full: st.LimitReached != ""}
	if b.Full {
		b.Messages = append(b.Messages, limitReachedSentence(ctx, st.LimitReached))
	}
	budgetUsedUp := st.LimitReached == models.BudgetUsedUp()
	if l := st.Quota.BudgetPerMonthMicros; l != nil && !b.Full && st.BookingSetAside > 0 && st.MonthSpend+st.BookingSetAside >= *l {
		// Launches off the bookings are refused: said before one is.
		b.Messages = append(b.Messages, i18n.T(ctx, "Your bookings would bill %s for their unused time this month, all of the %s left of your monthly budget: only launches on your bookings can start.",
			atLeast(st.BookingSetAside), atMost(max(*l-st.MonthSpend, 0))))
	}
	if l := st.Quota.BudgetPerMonthMicros; l != nil && *l > 0 && float64(st.MonthSpend) >= warnFraction*float64(*l) && st.MonthSpend < *l && !budgetUsedUp {
		b.Messages = append(b.Messages, i18n.T(ctx, "You have spent %s of your monthly budget of %s (%d%%).",
			h.spentOf(ctx, l)(st.MonthSpend), amount(*l), st.MonthSpend*100 / *l))
	}
	if l := st.Quota.GPUHoursPerMonth; l != nil && *l > 0 && float64(st.MonthGPUSecs) >= warnFraction*float64(*l*3600) && st.MonthGPUSecs < *l*3600 {
		b.Messages = append(b.Messages, i18n.T(ctx, "You have used %s of your %d monthly GPU-hours (%d%%).",
			gpuHoursText(st.MonthGPUSecs), *l, st.MonthGPUSecs*100/(*l*3600)))
	}
	if st.StorageOver && storage {
		// Nothing is stopped for it: said here so a launch is not the
		// first the user hears of it.
		b.Full = true
		b.Messages = append(b.Messages, i18n.T(ctx, "Your home storage holds %s GiB, more than your quota of %d GiB: launches and starts with GPUs are refused until you are back under it. Start a workbench without GPU to delete files, or delete a workbench's data.",
			models.GiBText(st.StorageUsed), *st.Quota.MaxStorageGiB))
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
