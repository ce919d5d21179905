package templates

import (
	"context"

	"workbench/templates/i18n"
)

// TierName names a cloud price tier in the reader's language; a tier the
// portal does not know is shown as stored.
func TierName(ctx context.Context, tier string) string {
	switch tier {
	case "on-demand":
		return i18n.T(ctx, "on-demand")
	case "spot":
		return i18n.T(ctx, "spot")
	case "reserved-1y":
		return i18n.T(ctx, "reserved-1y")
	case "reserved-3y":
		return i18n.T(ctx, "reserved-3y")
	case "reserved-weekly":
		return i18n.T(ctx, "reserved-weekly")
	case "monthly": // a month's lease, as the researched price list has it
		return i18n.T(ctx, "monthly")
	case "preemptible":
		return i18n.T(ctx, "preemptible")
	}
	return tier
}

// freeUnitsText counts free units in the reader's language with the plural
// the count takes: "7 GPUs", "1 MIG instance". noun is the English plural
// the handler names the unit with (FlavorRow.FreeNoun).
func freeUnitsText(ctx context.Context, n int, noun string) string {
	switch noun {
	case "MIG instances":
		return i18n.T(ctx, "%d MIG instances", n)
	case "GPU slices":
		return i18n.T(ctx, "%d GPU slices", n)
	case "GPUs":
		return i18n.T(ctx, "%d GPUs", n)
	}
	return i18n.T(ctx, "%d %s", n, noun)
}

// freeCountText is the launch form's free count of a flavor's units, with
// those others' bookings hold back apart: "7 free", "7 free · 1 booked by
// others now". English says it alike for every kind; Chinese counts whole
// GPUs with 块 and MIG instances or slices with 个 ("7 块空闲" read as
// seven cards beside a MIG flavor), so those take their own keys.
func freeCountText(ctx context.Context, free, booked int, noun string) string {
	parts := noun == "MIG instances" || noun == "GPU slices"
	switch {
	case parts && booked > 0:
		return i18n.T(ctx, "%d free · %d reserved for others now (MIG instances or slices)", free, booked)
	case parts:
		return i18n.T(ctx, "%d free (MIG instances or slices)", free)
	case booked > 0:
		return i18n.T(ctx, "%d free · %d reserved for others now", free, booked)
	}
	return i18n.T(ctx, "%d free", free)
}
