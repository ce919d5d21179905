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
// the one its culler stops by.
func (h *Handler) gpuIdleView(ctx context.Context, wb *models.Workbench) templates.GPUIdleView {
	return gpuIdleText(ctx, h.wbs.GPUIdle(ctx, wb), h.wbs.Now())
}

func gpuIdleText(ctx context.Context, g orchestrator.GPUIdle, now time.Time) templates.GPUIdleView {
	switch {
	case g.Timeout <= 0:
		return templates.GPUIdleView{}
	case g.Since.IsZero():
		// Busy, or a GPU that could not be read: never counted as idle.
		return templates.GPUIdleView{Text: i18n.T(ctx, "GPU-idle release: stops after %s with its GPUs below %d%% utilisation.",
			minutesText(ctx, g.Timeout), g.ThresholdPercent)}
	case g.Warn:
		return templates.GPUIdleView{Warn: true, Text: i18n.T(ctx, "GPU idle for %s — stops at %s unless its GPUs are used (home kept).",
			minutesText(ctx, g.For), clockText(ctx, g.StopAt, now))}
	default:
		return templates.GPUIdleView{Text: i18n.T(ctx, "GPU idle for %s — stops at %s if it stays idle.",
			minutesText(ctx, g.For), clockText(ctx, g.StopAt, now))}
	}
}
