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
	case "preemptible":
		return i18n.T(ctx, "preemptible")
	}
	return tier
}
