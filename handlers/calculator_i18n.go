package handlers

import (
	"context"
	"math/big"
	"strings"

	"workbench/models/pricing"
	"workbench/templates"
	"workbench/templates/i18n"
)

// The calculator's text in the page's language (calcEnv.lc). The pricing
// package words its own notes in English for the CSV and the JSON API;
// these functions word the same facts for a reader of the page.

// fxDescribe words an exchange rate with its date and source, as
// pricing.Conversion.Describe does: "1 USD = 7.2 CNY (2026-09, …)". The
// source of a shipped default rate is ours and is translated; an admin's
// is shown as typed.
func fxDescribe(lc context.Context, c pricing.Conversion) string {
	rate := pricing.FormatNumber(big.NewRat(c.Rate.Micros, 1_000_000), 6)
	src := c.Rate.Source
	if c.Rate.Default {
		src = trMsg(lc, src)
	}
	switch {
	case c.Rate.AsOf != "" && src != "":
		return i18n.T(lc, "1 %s = %s %s (%s, %s)", c.Rate.From, rate, c.Rate.To, c.Rate.AsOf, src)
	case c.Rate.AsOf != "" || src != "":
		return i18n.T(lc, "1 %s = %s %s (%s)", c.Rate.From, rate, c.Rate.To, c.Rate.AsOf+src)
	}
	return i18n.T(lc, "1 %s = %s %s", c.Rate.From, rate, c.Rate.To)
}

// trMsg is trcMsg for a context: the catalog text of an English message
// written elsewhere, when the catalog has it ("%" doubled in the key).
func trMsg(lc context.Context, msg string) string {
	if out := i18n.T(lc, strings.ReplaceAll(msg, "%", "%%")); out != msg {
		return out
	}
	return i18n.Reason(lc, msg) // a refusal worded below the handlers
}

// calcErrs copies the pricing package's field errors into the page's form
// errors, translated where the catalog knows them.
func calcErrs(lc context.Context, errs pricing.FieldErrors) templates.FormErrors {
	if errs == nil {
		return nil
	}
	out := templates.FormErrors{}
	for k, v := range errs {
		out[k] = msgPatternT(lc, v, calcErrMessages, calcErrMessageRes)
	}
	return out
}

// calcErrMessages are the pricing package's field errors that carry
// figures or names, as catalog keys (%s: the inserted words).
var calcErrMessages = []string{
	"must be between %s and %s",
	"must be more than 0 and at most %s",
	"%s would be %s: write a fraction (%s) or a percentage (%s)",
	"is too long (at most %s characters)",
	"has too many decimals (at most %s)",
	"this portal has no %s rate for %s",
	"this portal has no rate for %s; priced models: %s",
}

var calcErrMessageRes = msgPatterns(calcErrMessages)

// calcTypical explains a TCO field's typical value.
func calcTypical(lc context.Context, field string) string {
	return trMsg(lc, pricing.TypicalValues[field])
}

// calcMeasuredNote says what "use measured" measured.
func calcMeasuredNote(env *calcEnv) string {
	m := env.measured
	if m == nil {
		return env.measuredNote
	}
	return i18n.T(env.lc, "Measured over the last %d days (%d GPU-minutes): %d W on average; fitted %d W idle, %d W at full load; utilisation %d.%d%%.",
		pricing.MeasuredDays, m.Minutes, m.MeanWatts, m.IdleWatts, m.ActiveWatts, m.UtilPermille/10, m.UtilPermille%10)
}

// calcOfferLabel names a cloud offer: "AWS p5.48xlarge (spot, estimate)".
func calcOfferLabel(lc context.Context, o pricing.Offer) string {
	tier := templates.TierName(lc, o.Tier)
	if o.Derived {
		return i18n.T(lc, "%s %s (%s, estimate)", o.Provider, o.Name, tier)
	}
	return i18n.T(lc, "%s %s (%s)", o.Provider, o.Name, tier)
}

// calcNote translates the note of an estimated tier ("estimate: on-demand
// less 40%"); a catalog row's own note is shown as written.
func calcNote(lc context.Context, note string) string {
	const derived = "estimate: on-demand less "
	if rest, ok := strings.CutPrefix(note, derived); ok {
		return i18n.T(lc, "estimate: on-demand less %s", rest)
	}
	return note
}
