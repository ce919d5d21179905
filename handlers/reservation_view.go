package handlers

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/templates"
	"workbench/templates/i18n"
)

// The pool page's bookings (docs/scheduling.md, "Reservations"): the
// booking form, a timeline over the next days and the list with Cancel.
// Times are shown and entered in UTC, the portal's displayed time zone.

// bookingLayout is the datetime-local value format (minutes; seconds are
// accepted on input).
const bookingLayout = "2006-01-02T15:04"

// timelineDays is how many days the timeline shows, from today 00:00 UTC.
const timelineDays = 7

// reservationsView builds the pool page's booking section; form is the
// posted form to show again (nil: a fresh one).
func (h *Handler) reservationsView(c *gin.Context, gpus []orchestrator.PoolGPU, form *templates.BookingForm) (templates.ReservationsView, error) {
	ctx := c.Request.Context()
	now := h.wbs.Now().UTC()
	var v templates.ReservationsView
	rows, err := h.reservationRows(c)
	if err != nil {
		return v, err
	}
	u := currentUser(c)
	fls, err := h.store.ListFlavors(ctx, true) // by GPU count: the smallest that fits is offered
	if err != nil {
		return v, err
	}
	ws := now.Truncate(24 * time.Hour)
	span := float64(timelineDays * 24 * time.Hour)
	scale := func(t time.Time) float64 { return min(max(float64(t.Sub(ws))/span, 0), 1) * 1000 }
	for d := 0; d < timelineDays; d++ {
		day := ws.AddDate(0, 0, d)
		v.Timeline.Days = append(v.Timeline.Days, weekdayShort(ctx, day.Weekday())+" "+day.Format("01-02"))
	}
	v.Timeline.NowX = fmt.Sprintf("%.1f", scale(now))
	for _, r := range rows {
		mine := r.User == u.Username // names are given only to the booker, their group and admins
		who := r.User
		switch {
		case r.User == "another user":
			who = i18n.T(ctx, "another user")
		case mine && r.Group != "":
			who = i18n.T(ctx, "you, for group %s", r.Group)
		case r.Group != "":
			who = i18n.T(ctx, "%s, for group %s", r.User, r.Group)
		case mine:
			who = i18n.T(ctx, "you")
		}
		what := unitLabel(ctx, r.UnitKind, r.GPUModel, r.MIGProfile)
		start, end := r.StartsAt, r.EndsAt
		row := templates.BookingRow{ID: r.ID, Who: who, What: what, Units: r.Units, Note: r.Note,
			Start: templates.WhenIn(ctx, &start), End: templates.WhenIn(ctx, &end), Active: r.Active, Mine: mine,
			CanCancel: mine || u.IsAdmin()}
		if r.forViewer {
			row.LaunchURL = launchWithBooking(&r, fls)
		}
		v.Rows = append(v.Rows, row)
		x := scale(start)
		w := max(scale(end)-x, 2) // a short booking stays visible
		v.Timeline.Rows = append(v.Timeline.Rows, templates.TimelineRow{ID: r.ID, Label: fmt.Sprintf("%d × %s", r.Units, what), Who: who,
			Window: templates.WhenIn(ctx, &start) + " → " + templates.WhenIn(ctx, &end), X: fmt.Sprintf("%.1f", x), W: fmt.Sprintf("%.1f", w),
			Active: r.Active, Mine: mine, Later: !start.Before(ws.Add(timelineDays * 24 * time.Hour))})
	}
	if form == nil {
		start := now.Truncate(time.Hour).Add(time.Hour)
		form = &templates.BookingForm{Units: "1", StartsAt: start.Format(bookingLayout), EndsAt: start.Add(2 * time.Hour).Format(bookingLayout)}
	}
	v.Form = *form
	v.Form.Pools = h.bookablePools(ctx, gpus)
	// A weekly limit of 0 refuses every booking: say so instead of a form
	// that is refused only once filled in.
	if limit, err := h.store.ReservationCapOf(ctx, u.ID); err != nil {
		return v, err
	} else if limit != nil && *limit == 0 {
		v.Form.Closed = i18n.T(ctx, "Your booking limit is 0 unit-hours a week, so you cannot book units. Ask an administrator to raise it.")
	}
	// One books for oneself or a group of one's own; an admin for any.
	if u.IsAdmin() {
		v.Form.Groups, err = h.store.GroupNames(ctx)
	} else {
		v.Form.Groups, err = h.store.UserGroups(ctx, u.ID)
	}
	return v, err
}

// bookablePools lists what the pool can book, one option per kind of unit
// (whole GPUs of a model, MIG instances of a profile on a model, slices of
// a model's shared GPUs) with how many it can offer.
func (h *Handler) bookablePools(ctx context.Context, gpus []orchestrator.PoolGPU) []templates.PoolOption {
	var out []templates.PoolOption
	seen := map[string]bool{}
	add := func(kind, model, profile string) {
		value := kind + "|" + model + "|" + profile
		if seen[value] {
			return
		}
		seen[value] = true
		n, err := h.pool.Capacity(ctx, kind, model, profile)
		if err != nil {
			h.log.Warn("pool capacity", "kind", kind, "model", model, "profile", profile, "err", err)
			return
		}
		if n > 0 {
			out = append(out, templates.PoolOption{Value: value, Kind: kind, Label: unitLabel(ctx, kind, model, profile), Capacity: n})
		}
	}
	for _, g := range gpus {
		switch {
		case g.MIGEnabled:
			for _, m := range g.MIG {
				add(models.UnitMIG, g.Model, m.Profile)
			}
		case g.SharedSlices > 0:
			add(models.UnitSlice, g.Model, "")
		default:
			add(models.UnitGPU, g.Model, "")
		}
	}
	return out
}

// unitLabel names a kind of unit in the reader's language: "H100 80GB
// HBM3", "MIG 1g.10gb of H100 80GB HBM3", "slice of a shared H100 80GB HBM3".
func unitLabel(ctx context.Context, kind, model, profile string) string {
	m := models.ShortGPUName(model)
	switch kind {
	case models.UnitMIG:
		return i18n.T(ctx, "MIG %s of %s", profile, m)
	case models.UnitSlice:
		return i18n.T(ctx, "slice of a shared %s", m)
	}
	return m
}

func weekdayShort(ctx context.Context, d time.Weekday) string {
	return [...]string{i18n.T(ctx, "Sun"), i18n.T(ctx, "Mon"), i18n.T(ctx, "Tue"), i18n.T(ctx, "Wed"),
		i18n.T(ctx, "Thu"), i18n.T(ctx, "Fri"), i18n.T(ctx, "Sat")}[d]
}

// launchReservations are the launch form's bookings: the user's own and
// their groups', not over, that fit at least one of the flavors (each
// option names those).
func (h *Handler) launchReservations(ctx context.Context, u *models.User, fls []models.Flavor) ([]templates.ReservationOption, error) {
	now := h.wbs.Now()
	list, err := h.store.Reservations(ctx, now)
	if err != nil {
		return nil, err
	}
	var out []templates.ReservationOption
	for i := range list {
		r := &list[i]
		if !r.For(u.ID) {
			continue
		}
		var fits []string
		for j := range fls {
			if fls[j].Enabled && orchestrator.ReservationFits(r, &fls[j]) {
				fits = append(fits, fls[j].Name)
			}
		}
		if len(fits) == 0 {
			continue
		}
		start, end := r.StartsAt, r.EndsAt
		label := i18n.T(ctx, "#%d · %d × %s · %s to %s", r.ID, r.Units, unitLabel(ctx, r.Kind(), r.GPUModel, r.MIGProfile),
			templates.WhenIn(ctx, &start), templates.WhenIn(ctx, &end))
		if r.GroupID != nil {
			label += " · " + i18n.T(ctx, "group %s", r.GroupName)
		}
		if !now.Before(start) {
			label += " · " + i18n.T(ctx, "open now")
		}
		out = append(out, templates.ReservationOption{ID: strconv.FormatInt(r.ID, 10), Label: label, Flavors: fits})
	}
	return out, nil
}

// parseBookingTime reads a datetime-local value as UTC.
func parseBookingTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{bookingLayout, bookingLayout + ":05", "2006-01-02 15:04"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// launchWithBooking is the launch form with the booking and the smallest
// enabled flavor it fits chosen ("" when none fits).
func launchWithBooking(r *APIReservation, fls []models.Flavor) string {
	b := &models.Reservation{ID: r.ID, GPUModel: r.GPUModel, UnitKind: r.UnitKind, MIGProfile: r.MIGProfile, Units: r.Units}
	for i := range fls {
		if fls[i].Enabled && orchestrator.ReservationFits(b, &fls[i]) {
			return "/workbenches/new?reservation=" + strconv.FormatInt(r.ID, 10) + "&flavor=" + url.QueryEscape(fls[i].Name)
		}
	}
	return ""
}
