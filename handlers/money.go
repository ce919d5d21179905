package handlers

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/templates"
	"workbench/templates/i18n"
)

// amountRule words a money field's rule for its errors: what a negative
// amount is told, and one beyond the field's limit (each names the rule:
// a credit's "cannot be negative: enter 0 or more" was followed, for 0, by
// "must be more than 0", and "is too large" named no limit).
type amountRule struct{ negative, tooLarge string }

var (
	// anyAmount is a field of no rule but the parser's (the command line).
	anyAmount = amountRule{"cannot be negative: enter 0 or more", "is too large"}
	// creditAmount is models.CreditOnce's rule, in currency units.
	creditAmount = amountRule{"must be more than 0 and at most 1,000,000", "must be more than 0 and at most 1,000,000"}
	// rateAmount is models' rate rule (maxRateMicros).
	rateAmount = amountRule{"must be between 0 and 1,000,000 per unit", "must be between 0 and 1,000,000 per unit"}
	// budgetAmount is models.Limits' budget rule (MaxBudgetMicros).
	budgetAmount = amountRule{"cannot be negative: enter 0 or more", "is too large (at most a billion a month; leave empty for unlimited)"}
)

// parseMajorUnits reads an amount in the currency's major unit ("12",
// "12.5", "0.000001") into micro-units exactly (pricing.ParseMicros), with
// the error worded for the form field by its rule.
func parseMajorUnits(field, s string, rule amountRule) (int64, error) {
	m, err := pricing.ParseMicros(s)
	switch {
	case errors.Is(err, pricing.ErrAmountPrecision):
		return 0, &models.ValidationError{Field: field, Message: "at most 6 decimals (one micro-unit)"}
	case errors.Is(err, pricing.ErrAmountRange):
		return 0, &models.ValidationError{Field: field, Message: rule.tooLarge}
	case err != nil && strings.HasPrefix(strings.TrimSpace(s), "-"):
		if _, positive := pricing.ParseMicros(strings.TrimPrefix(strings.TrimSpace(s), "-")); positive == nil {
			return 0, &models.ValidationError{Field: field, Message: rule.negative}
		}
		return 0, &models.ValidationError{Field: field, Message: "enter an amount such as 12 or 12.50"}
	case err != nil:
		return 0, &models.ValidationError{Field: field, Message: "enter an amount such as 12 or 12.50"}
	}
	return int64(m), nil
}

// parseCurrencyAmount is parseMajorUnits for an amount a person keeps in
// the currency itself (a budget, a credit): no more decimals than the
// currency has. A budget of 5.005 CNY was stored and shown as 5.01, half a
// fen more than the user had.
func parseCurrencyAmount(field, s, currency string, rule amountRule) (int64, error) {
	m, err := parseMajorUnits(field, s, rule)
	if err != nil {
		return 0, err
	}
	d := pricing.MinorUnits(currency)
	if m%pricing.MinorStep(currency) != 0 {
		msg := "at most 2 decimals: the currency's smallest unit"
		switch d {
		case 0:
			msg = "a whole amount: the currency has no smaller unit"
		case 3:
			msg = "at most 3 decimals: the currency's smallest unit"
		}
		return 0, &models.ValidationError{Field: field, Message: msg}
	}
	return m, nil
}

// exactAmount renders micro-units with all six places ("1.234567"), for CSV.
func exactAmount(micros int64) string { return pricing.Micros(micros).Exact() }

// plainAmount is exactAmount without trailing zeros ("12.5", "100"), for
// form fields that show a stored amount.
func plainAmount(micros int64) string { return pricing.Micros(micros).Plain() }

// amountText formats micro-units for a page in the portal's currency and
// the reader's style (templates.Money): "12.35 USD" (its own decimals:
// "1235 JPY"), "¥12.35" in Chinese.
func (h *Handler) amountText(ctx context.Context, micros int64) string {
	return templates.Money(ctx, micros, h.cfg.Currency)
}

// amountFor is amountText bound to a request's locale, for views that
// take a formatter.
func (h *Handler) amountFor(ctx context.Context) func(int64) string {
	return func(micros int64) string { return h.amountText(ctx, micros) }
}

// limitAmountsFor is amountFor for figures compared against a monthly
// budget (templates.MoneyAtMost, MoneyAtLeast): what is left, rounded
// down, and what is owed, rounded up, each written to the micro-unit under
// a cent, as the refusals write them (docs/ux-choices.md, session 57).
// Listings keep amountFor; a spend shown against its budget is spentOf.
func (h *Handler) limitAmountsFor(ctx context.Context) (atMost, atLeast func(int64) string) {
	return func(micros int64) string { return templates.MoneyAtMost(ctx, micros, h.cfg.Currency) },
		func(micros int64) string { return templates.MoneyAtLeast(ctx, micros, h.cfg.Currency) }
}

// spentOf renders a month's spend shown against its budget limit (nil:
// none): as the statement writes it, except that a spend under its limit
// never reads as reaching it, and a sliver under a cent exactly
// (templates.MoneySpentOf).
func (h *Handler) spentOf(ctx context.Context, limit *int64) func(int64) string {
	return func(micros int64) string { return templates.MoneySpentOf(ctx, micros, limit, h.cfg.Currency) }
}

// milliText renders milli-units as a short decimal: 2000 → "2", 500 → "0.5".
func milliText(q int64) string {
	sign := ""
	if q < 0 {
		sign, q = "-", -q
	}
	s := fmt.Sprintf("%d.%03d", q/1000, q%1000)
	s = strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
	return sign + s
}

// gpuHoursText renders GPU-seconds as hours with two decimals (display only).
func gpuHoursText(secs int64) string {
	sign := ""
	if secs < 0 {
		sign, secs = "-", -secs
	}
	h := (secs*100 + 1800) / 3600
	return fmt.Sprintf("%s%d.%02d", sign, h/100, h%100)
}

// parseMonth reads ?month=YYYY-MM; empty means the current month (UTC).
func parseMonth(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return models.MonthStart(now), nil
	}
	t, err := time.Parse("2006-01", s)
	if err != nil {
		return time.Time{}, &models.ValidationError{Field: "month", Message: "use YYYY-MM, e.g. " + now.UTC().Format("2006-01")}
	}
	return t.UTC(), nil
}

// monthNav builds the month picker of a page at path; extra query values
// (e.g. group_by) travel with every link and the form.
func monthNav(path string, month, now time.Time, extra url.Values) templates.MonthNav {
	link := func(m time.Time) string {
		q := url.Values{}
		for k, v := range extra {
			q[k] = v
		}
		q.Set("month", m.Format("2006-01"))
		return path + "?" + q.Encode()
	}
	nav := templates.MonthNav{Action: path, Value: month.Format("2006-01"), Label: month.Format("January 2006"),
		Prev: link(month.AddDate(0, -1, 0)), Current: month.Equal(models.MonthStart(now))}
	if next := month.AddDate(0, 1, 0); !next.After(models.MonthStart(now)) {
		nav.Next = link(next)
	}
	for k, v := range extra {
		if len(v) > 0 {
			nav.Hidden = append(nav.Hidden, templates.MonthParam{Name: k, Value: v[0]})
		}
	}
	return nav
}

// csvText keeps a spreadsheet from reading a text cell as a formula.
func csvText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// resourceUnit names what a rate of a resource is per.
func resourceUnit(resource string) string {
	switch resource {
	case pricing.GPU:
		return "GPU-hour"
	case pricing.MIG:
		return "MIG instance-hour"
	case pricing.Slice:
		return "slice-hour"
	case pricing.CPU:
		return "core-hour"
	case pricing.Memory:
		return "GiB-hour"
	case pricing.Storage:
		return "GiB-month"
	}
	return "unit-hour"
}

// quantityText renders a ledger quantity with its unit, in the reader's
// language (lc).
func quantityText(lc context.Context, resource string, q int64) string {
	n := milliText(q)
	switch resource {
	case pricing.GPU:
		return n + " GPU"
	case pricing.MIG:
		return n + " " + i18n.T(lc, "MIG instance")
	case pricing.Slice:
		return n + " " + i18n.T(lc, "slice")
	case pricing.CPU:
		if q == 1000 {
			return i18n.T(lc, "1 core")
		}
		return i18n.T(lc, "%s cores", n)
	case models.ResourceReservation:
		// The booked units left unused, on average over the window.
		return i18n.T(lc, "%s units", n)
	case models.ResourceCredit:
		return "—"
	default:
		return n + " GiB"
	}
}

// secondsText renders seconds as h:mm:ss.
func secondsText(secs int64) string {
	sign := ""
	if secs < 0 {
		sign, secs = "-", -secs
	}
	return fmt.Sprintf("%s%d:%02d:%02d", sign, secs/3600, secs/60%60, secs%60)
}

// periodText renders a ledger period in UTC.
func periodText(from, to time.Time) string {
	from, to = from.UTC(), to.UTC()
	end := to.Format("15:04:05")
	if to.Format("2006-01-02") != from.Format("2006-01-02") {
		end = to.Format("2006-01-02 15:04:05")
	}
	return from.Format("2006-01-02 15:04:05") + " – " + end
}

// quotaBar builds a usage-vs-limit bar; limit nil means unlimited. show
// formats a value for display.
func quotaBar(key, label string, used int64, limit *int64, show func(int64) string) templates.QuotaBar {
	b := templates.QuotaBar{Key: key, Label: label, Used: show(used), DataUsed: strconv.FormatInt(used, 10)}
	if limit == nil {
		b.Unlimited, b.Limit, b.DataLimit, b.Level = true, "unlimited", "unlimited", "ok"
		return b
	}
	l := *limit
	b.Limit, b.DataLimit = show(l), strconv.FormatInt(l, 10)
	switch {
	case l <= 0:
		b.Percent = 100
	case used >= l:
		b.Percent = 100
	case used > 0:
		b.Percent = int(used * 100 / l)
	}
	switch {
	case used >= l:
		b.Level = "full"
	case used*10 >= l*8:
		b.Level = "warn"
	default:
		b.Level = "ok"
	}
	return b
}

func countText(n int64) string { return strconv.FormatInt(n, 10) }

// hoursToSeconds turns a limit in hours into seconds (nil stays nil).
func hoursToSeconds(h *int64) *int64 {
	if h == nil {
		return nil
	}
	s := *h * 3600
	return &s
}

// gibToMilli turns a limit in GiB into milli-GiB (nil stays nil).
func gibToMilli(g *int64) *int64 {
	if g == nil {
		return nil
	}
	m := *g * 1000
	return &m
}

// ParseMajorUnits is parseMajorUnits for the command line (`workbench
// ledger credit`), so the shell and the forms read amounts alike.
func ParseMajorUnits(field, s string) (int64, error) { return parseMajorUnits(field, s, anyAmount) }
