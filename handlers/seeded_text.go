package handlers

import (
	"context"

	"workbench/models"
	"workbench/templates/i18n"
)

// seededText is s for a reader of ctx's language: a text the portal seeded
// (a default image's or priority class's description) is translated while
// unchanged; an administrator's own words are shown as written.
func seededText(ctx context.Context, s string) string {
	if models.SeededText(s) {
		// The whole text is a catalog key (seeds.json, no printf verbs).
		// Not Reason: it tries the reasons' formats first, and "%s; %s"
		// matched "discounted; yields its GPUs…" and left both halves
		// English.
		return i18n.T(ctx, s)
	}
	return s
}
