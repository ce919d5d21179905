package templates

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/a-h/templ"

	"workbench/models/pricing"
	"workbench/templates/i18n"
)

// statusTexts are the statuses error pages show, as catalog keys.
var statusTexts = map[int]string{
	http.StatusBadRequest: i18n.Key("Bad Request"), http.StatusUnauthorized: i18n.Key("Unauthorized"),
	http.StatusForbidden: i18n.Key("Forbidden"), http.StatusNotFound: i18n.Key("Not Found"),
	http.StatusMethodNotAllowed: i18n.Key("Method Not Allowed"), http.StatusConflict: i18n.Key("Conflict"),
	http.StatusRequestEntityTooLarge: i18n.Key("Request Entity Too Large"), http.StatusTooManyRequests: i18n.Key("Too Many Requests"),
	http.StatusInternalServerError: i18n.Key("Internal Server Error"), http.StatusBadGateway: i18n.Key("Bad Gateway"),
	http.StatusServiceUnavailable: i18n.Key("Service Unavailable"), http.StatusGatewayTimeout: i18n.Key("Gateway Timeout"),
	http.StatusUnprocessableEntity: i18n.Key("Unprocessable Entity"), 499: i18n.Key("Client Closed Request"),
}

// statusTitle heads an error page: "404 · Not Found" ("404 · 未找到").
func statusTitle(ctx context.Context, status int) string {
	t := http.StatusText(status)
	if k, ok := statusTexts[status]; ok {
		t = i18n.T(ctx, k)
	}
	if t != "" {
		return strconv.Itoa(status) + " · " + t
	}
	return strconv.Itoa(status)
}

// GiB formats MiB as GiB with one decimal.
func GiB(mib uint64) string { return fmt.Sprintf("%.1f GiB", float64(mib)/1024) }

// When formats a time for tables; zero and nil read as "—".
func When(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

// Money formats micro-units of currency for the reader's locale. English
// keeps the portal's long-standing "1234.57 USD" (the ISO code says which
// dollar); Chinese puts the symbol first and groups thousands, as Chinese
// prices are written: "¥1,234.57", "$12.35", "1,234.57 EUR" for a currency
// without a symbol of its own. Amounts stay int64 micro-units until here.
//
// An amount that is not zero but rounds to zero reads "< 0.01 USD"
// ("> -0.01 USD" below zero): a CPU run's first minutes cost a fraction of
// a cent, and "0.00" read as free. That is for listings (ledger lines,
// totals, a workbench's cost); a figure compared against a limit is
// MoneyAtMost's or MoneyAtLeast's, written to the micro-unit under a cent.
func Money(ctx context.Context, micros int64, currency string) string {
	dec := pricing.Micros(micros).Decimal(currency)
	if micros == 0 || strings.Trim(dec, "-0.") != "" {
		return withCurrency(ctx, dec, currency)
	}
	step := pricing.MinorStep(currency)
	if micros < 0 {
		return "> " + withCurrency(ctx, pricing.Micros(-step).Decimal(currency), currency)
	}
	return "< " + withCurrency(ctx, pricing.Micros(step).Decimal(currency), currency)
}

// MoneyRate is Money for a price per unit, with a rate's two to four
// decimals (pricing.Micros.Rate): "0.0125 USD" in English, "¥0.0125" in
// Chinese, so a price list reads in the same style as the amounts.
func MoneyRate(ctx context.Context, micros int64, currency string) string {
	return withCurrency(ctx, pricing.Micros(micros).Rate(), currency)
}

// withCurrency writes a formatted decimal with its currency in the
// reader's style (see Money; i18n.Locale.Amount, which the amounts inside a
// refusal print through too).
func withCurrency(ctx context.Context, dec, currency string) string {
	return i18n.FromContext(ctx).Amount(dec, currency)
}

// MoneyPerHour is Money for an hourly rate: "3.25 USD/h", "¥3.25/小时".
func MoneyPerHour(ctx context.Context, micros int64, currency string) string {
	return i18n.T(ctx, "%s/h", Money(ctx, micros, currency))
}

// WhenIn is When in the reader's locale: "2026-03-04 14:05 UTC" in
// English, "2026年3月4日 14:05 UTC" in Chinese; followed by the time in the
// reader's own zone where they chose one (WithTimeZone).
func WhenIn(ctx context.Context, t *time.Time) string {
	if t == nil || t.IsZero() {
		return "—"
	}
	return whenIn(ctx, *t, "15:04")
}

// ClockIn is a time of today as "14:10 UTC", with the reader's own zone
// beside it as WhenIn writes it: a deadline on the workbench page.
func ClockIn(ctx context.Context, t time.Time) string {
	u := t.UTC()
	return u.Format("15:04 UTC") + besideText(ctx, u, i18n.FromContext(ctx).Tag == i18n.English)
}

// besideText is besideUTC in brackets after a space, full-width ones in
// Chinese as the pages write them; "" without a zone.
func besideText(ctx context.Context, u time.Time, english bool) string {
	local, ok := besideUTC(ctx, u, english)
	switch {
	case !ok:
		return ""
	case english:
		return " (" + local + ")"
	}
	return "（" + local + "）"
}

// timeZoneKey holds the zone the reader chose to read times in beside UTC.
type timeZoneKey struct{}

// WithTimeZone makes WhenIn add the time in loc beside UTC ("2026-12-06
// 07:58 UTC (15:58 UTC+8)"). Times stay UTC first: they are typed,
// booked and exported in UTC, and one clock on every page keeps a
// deadline from being read in the wrong one.
func WithTimeZone(ctx context.Context, loc *time.Location) context.Context {
	if loc == nil {
		return ctx
	}
	return context.WithValue(ctx, timeZoneKey{}, loc)
}

// besideUTC is u in the reader's zone with its offset ("15:58 UTC+8"; the
// date too where it differs from UTC's), or false where the reader chose
// none or the zone is at UTC then.
func besideUTC(ctx context.Context, u time.Time, english bool) (string, bool) {
	if ctx == nil { // text made outside a request (English, UTC)
		return "", false
	}
	loc, _ := ctx.Value(timeZoneKey{}).(*time.Location)
	if loc == nil {
		return "", false
	}
	l := u.In(loc)
	_, offset := l.Zone()
	if offset == 0 {
		return "", false
	}
	zone := "UTC" + offsetText(offset)
	switch {
	case l.YearDay() == u.YearDay() && l.Year() == u.Year():
		return l.Format("15:04") + " " + zone, true
	case english:
		return l.Format("01-02 15:04") + " " + zone, true
	default:
		return fmt.Sprintf("%d月%d日 %s %s", int(l.Month()), l.Day(), l.Format("15:04"), zone), true
	}
}

// offsetText is a UTC offset as people write it: "+8", "+5:30", "-3".
func offsetText(seconds int) string {
	sign := "+"
	if seconds < 0 {
		sign, seconds = "-", -seconds
	}
	h, m := seconds/3600, seconds%3600/60
	if m == 0 {
		return sign + strconv.Itoa(h)
	}
	return fmt.Sprintf("%s%d:%02d", sign, h, m)
}

// stateLabels are the workbench states as people read them; in English the
// state's own name, which the API and the tests also use.
var stateLabels = map[string]string{
	"queued": i18n.Key("queued"), "requested": i18n.Key("requested"), "pulling": i18n.Key("pulling"),
	"creating": i18n.Key("creating"), "starting": i18n.Key("starting"), "running": i18n.Key("running"),
	"stopping": i18n.Key("stopping"), "stopped": i18n.Key("stopped"), "preempted": i18n.Key("preempted"),
	"failed": i18n.Key("failed"),
}

// StateLabel is a workbench state in the reader's language.
func StateLabel(ctx context.Context, state string) string {
	if k, ok := stateLabels[state]; ok {
		return i18n.T(ctx, k)
	}
	return state
}

// StateLabelsJSON maps every state to its label, for the workbench page's
// script, which updates the state badge as events arrive (the script has no
// catalog of its own).
func StateLabelsJSON(ctx context.Context) string {
	m := make(map[string]string, len(stateLabels))
	for s := range stateLabels {
		m[s] = StateLabel(ctx, s)
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// quotaLimit is a bar's limit as shown: "unlimited" in the reader's language.
func quotaLimit(ctx context.Context, b QuotaBar) string {
	if b.Unlimited {
		return i18n.T(ctx, "unlimited")
	}
	return b.Limit
}

var tokenStatuses = map[string]string{"active": i18n.Key("active"), "revoked": i18n.Key("revoked"), "expired": i18n.Key("expired")}

// TokenStatus is a token's status ("active", "revoked", "expired") in the
// reader's language.
func TokenStatus(ctx context.Context, status string) string {
	if k, ok := tokenStatuses[status]; ok {
		return i18n.T(ctx, k)
	}
	return status
}

// MonthText is a month picker's month in the reader's language: the
// handler's "January 2026", or "2026年1月".
func MonthText(ctx context.Context, m MonthNav) string {
	if i18n.FromContext(ctx).Tag == i18n.English {
		return m.Label
	}
	t, err := time.Parse("2006-01", m.Value)
	if err != nil {
		return m.Label
	}
	return monthIn(ctx, t)
}

// monthIn is t's month in the reader's language: "December 2026", or
// "2026年12月" (the month pickers and the dates of refusals).
func monthIn(ctx context.Context, t time.Time) string {
	if i18n.FromContext(ctx).Tag == i18n.English {
		return t.Format("January 2006")
	}
	return fmt.Sprintf("%d年%d月", t.Year(), int(t.Month()))
}

// UnitSuffix is a unit after a label, bracketed as the reader's language
// writes it: " (kWh)" in English, "（kWh）" in Chinese, where full-width
// brackets carry their own space and half-width ones beside full-width
// ones on the same page read as a typo.
func UnitSuffix(ctx context.Context, unit string) string {
	if unit == "" {
		return "" // a field without a unit
	}
	if i18n.FromContext(ctx).Tag == i18n.English {
		return " (" + unit + ")"
	}
	return "（" + unit + "）"
}

// ariaCurrentPage marks the link to the page being read (aria-current),
// which the style sheet shows only by colour ("active").
func ariaCurrentPage(on bool) templ.Attributes {
	if on {
		return templ.Attributes{"aria-current": "page"}
	}
	return nil
}
