package handlers

import (
	"context"
	"fmt"

	"workbench/models"
	"workbench/orchestrator/gpu"
	"workbench/templates"
	"workbench/templates/i18n"
)

// wbGPUTelemetry builds the sparklines of the GPUs a running workbench
// holds from the sampler's history (memory in percent of used + free).
func (h *Handler) wbGPUTelemetry(ctx context.Context, wb *models.Workbench) []templates.WBGPUTelemetry {
	if wb.State != models.StateRunning {
		return nil
	}
	var out []templates.WBGPUTelemetry
	for _, uuid := range wb.GPUs {
		out = append(out, gpuTelemetryRow(ctx, uuid, h.pool.History(uuid)))
	}
	return out
}

func gpuTelemetryRow(ctx context.Context, uuid string, hist []gpu.Sample) templates.WBGPUTelemetry {
	g := templates.WBGPUTelemetry{UUID: uuid, Now: i18n.T(ctx, "no reading yet")}
	for _, s := range hist {
		if s.Readable(gpu.FieldUtil) {
			g.UtilPoints = append(g.UtilPoints, float64(s.UtilPercent))
		}
		if total := s.MemUsedMiB + s.MemFreeMiB; s.Readable(gpu.FieldMemory) && total > 0 {
			g.MemPoints = append(g.MemPoints, 100*float64(s.MemUsedMiB)/float64(total))
		}
	}
	if n := len(hist); n > 0 {
		last := hist[n-1]
		g.Now = i18n.T(ctx, "could not read")
		if last.Readable(gpu.FieldUtil) {
			g.Now = fmt.Sprintf("%d%%", last.UtilPercent)
		}
		if last.Readable(gpu.FieldMemory) {
			g.MemNow = fmt.Sprintf("%.1f / %.1f GiB", float64(last.MemUsedMiB)/1024, float64(last.MemUsedMiB+last.MemFreeMiB)/1024)
		}
	}
	return g
}
