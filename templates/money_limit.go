package templates

import (
	"context"

	"workbench/models/pricing"
)

// MoneyAtMost is Money for a figure a person compares against a limit
// (what is left of a monthly budget, what is spent of it): rounded down in
// the currency's decimals, and a sliver under the smallest unit written to
// the micro-unit ("0.003 USD", "$0.003") where Money writes "< 0.01 USD".
// The refusals write what is left so (models.moneyRounded): a banner of
// "< $0.01 left" and then a refusal of "0.003 USD left" told two stories.
// Rule: docs/ux-choices.md, session 57; pricing.Micros.AtMost.
func MoneyAtMost(ctx context.Context, micros int64, currency string) string {
	return withCurrency(ctx, pricing.Micros(micros).AtMost(currency), currency)
}

// MoneyAtLeast is MoneyAtMost for what is owed against a limit (what
// bookings set aside, a minimum charge): rounded up.
func MoneyAtLeast(ctx context.Context, micros int64, currency string) string {
	return withCurrency(ctx, pricing.Micros(micros).AtLeast(currency), currency)
}

// MoneySpentOf is Money for a month's spend shown against its budget limit
// (nil: none): as the statement writes it, but a spend under its limit
// never written as reaching it, and a sliver under the smallest unit
// exactly (pricing.Micros.SpentOf).
func MoneySpentOf(ctx context.Context, micros int64, limit *int64, currency string) string {
	return withCurrency(ctx, pricing.Micros(micros).SpentOf(limit, currency), currency)
}
