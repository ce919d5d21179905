package handlers

import (
	"context"
	"fmt"
	"time"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/templates"
)

// gpuIdleView words GPU-idle release for the workbench page: "GPU idle
// for 42 min — stops at 14:10 UTC". Times come from the manager's clock,
// the one its culler stops by.
func (h *Handler) gpuIdleView(ctx context.Context, wb *models.Workbench) templates.GPUIdleView {
	return gpuIdleText(h.wbs.GPUIdle(ctx, wb), h.wbs.Now())
}

func gpuIdleText(g orchestrator.GPUIdle, now time.Time) templates.GPUIdleView {
	switch {
	case g.Timeout <= 0:
		return templates.GPUIdleView{}
	case g.Since.IsZero():
		// Busy, or a GPU that could not be read: never counted as idle.
		return templates.GPUIdleView{Text: fmt.Sprintf("GPU-idle release: stops after %s with its GPUs below %d%% utilisation.",
			minutesText(g.Timeout), g.ThresholdPercent)}
	case g.Warn:
		return templates.GPUIdleView{Warn: true, Text: fmt.Sprintf("GPU idle for %s — stops at %s unless its GPUs are used (home kept).",
			minutesText(g.For), clockText(g.StopAt, now))}
	default:
		return templates.GPUIdleView{Text: fmt.Sprintf("GPU idle for %s — stops at %s if it stays idle.",
			minutesText(g.For), clockText(g.StopAt, now))}
	}
}
