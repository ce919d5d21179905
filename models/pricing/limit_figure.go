package pricing

// The figures a person compares against a limit (what is left of a
// monthly budget, what is spent of it, what a booking sets aside, a
// minimum charge) are written by one rule, on the banners, the usage page
// and in the refusals alike (docs/ux-choices.md, session 57):
//
//   - an amount that is not zero but under the currency's smallest unit
//     is written to the micro-unit ("0.003"): "< 0.01 left" on the banner
//     and "0.003 left" in the refusal that followed told two stories;
//   - any other amount keeps the currency's decimals, rounded so that the
//     written figures compare as the amounts do: what is left down
//     (AtMost), what is owed up (AtLeast);
//   - what is spent is written as the statements write it (nearest), so
//     the quota console, the banner and the statement's line agree, except
//     that a spend still under its limit is never written as reaching it
//     (SpentOf: "0.99 of 1.00", not "1.00 of 1.00 (99%)").
//
// Listings (ledger lines, totals, a workbench's cost) keep Decimal: they
// are compared against nothing, and the CSV has them exact.

// AtMost renders m for a comparison against a limit, rounded down to the
// currency's decimals: never more than m. A sliver under the smallest
// unit is written exactly (see above).
func (m Micros) AtMost(currency string) string { return m.bound(currency, false) }

// AtLeast is AtMost rounded up: never less than m (what is owed).
func (m Micros) AtLeast(currency string) string { return m.bound(currency, true) }

func (m Micros) bound(currency string, up bool) string {
	step := Micros(MinorStep(currency))
	if m.sliver(step) {
		return m.Plain()
	}
	r := m - m%step // toward zero
	switch {
	case up && m%step > 0:
		r += step
	case !up && m%step < 0:
		r -= step
	}
	return r.Decimal(currency)
}

// SpentOf renders a month's spend m shown against its budget limit (nil:
// none): Decimal, as the statement writes the same spend, unless that
// would write a spend still under the limit as reaching it, then AtMost.
// A sliver under the smallest unit is written exactly (see above). Not
// AtMost always: the quota console said 0.20 of a spend the statement's
// line wrote 0.21 (TestAccruingStorageAgreesAcrossPages).
func (m Micros) SpentOf(limit *int64, currency string) string {
	step := Micros(MinorStep(currency))
	if m.sliver(step) {
		return m.Plain()
	}
	if limit != nil && m < Micros(*limit) && m.nearest(step) >= Micros(*limit) {
		return m.AtMost(currency)
	}
	return m.Decimal(currency)
}

// sliver reports whether m is not zero but under step (the currency's
// smallest unit) either way: the amount written exactly.
func (m Micros) sliver(step Micros) bool { return m != 0 && m > -step && m < step }

// nearest is m rounded half away from zero to a multiple of step, as
// Decimal writes it.
func (m Micros) nearest(step Micros) Micros {
	if m < 0 {
		return -(-m).nearest(step)
	}
	return (m + step/2) / step * step
}
