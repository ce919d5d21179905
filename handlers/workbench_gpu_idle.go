package handlers

import (
	"context"
	"time"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/templates"
	"workbench/templates/i18n"
)

// gpuIdleView words GPU-idle release for the workbench page: "GPU idle
// for 42 min — stops at 14:10 UTC". Times come from the manager's clock,
// the one its culler stops by; the words are in the request's language.
func (h *Handler) gpuIdleView(ctx context.Context, wb *models.Workbench) templates.GPUIdleView {
	return gpuIdleText(ctx, h.wbs.GPUIdle(ctx, wb), h.wbs.Now())
}

func gpuIdleText(lc context.Context, g orchestrator.GPUIdle, now time.Time) templates.GPUIdleView {
	switch {
	case g.Timeout <= 0:
		return templates.GPUIdleView{}
	case g.Since.IsZero():
		// Busy, or a GPU that could not be read: never counted as idle.
		return templates.GPUIdleView{Text: i18n.T(lc, "GPU-idle release: stops after %s with its GPUs below %d%% utilisation.",
			minutesTextT(lc, g.Timeout), g.ThresholdPercent)}
	case g.Warn:
		return templates.GPUIdleView{Warn: true, Text: i18n.T(lc, "GPU idle for %s — stops at %s unless its GPUs are used (home kept).",
			minutesTextT(lc, g.For), clockText(g.StopAt, now))}
	default:
		return templates.GPUIdleView{Text: i18n.T(lc, "GPU idle for %s — stops at %s if it stays idle.",
			minutesTextT(lc, g.For), clockText(g.StopAt, now))}
	}
}

// minutesTextT is minutesText in lc's language: "less than a minute",
// "42 min", "2 h", "1 h 5 min".
func minutesTextT(lc context.Context, d time.Duration) string {
	m := int64(d / time.Minute)
	switch {
	case m < 1:
		return i18n.T(lc, "less than a minute")
	case m < 60:
		return i18n.T(lc, "%d min", m)
	case m%60 == 0:
		return i18n.T(lc, "%d h", m/60)
	default:
		return i18n.T(lc, "%d h %d min", m/60, m%60)
	}
}
