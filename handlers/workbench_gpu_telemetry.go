package handlers

import (
	"context"
	"fmt"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/orchestrator/gpu"
	"workbench/templates"
	"workbench/templates/i18n"
)

// wbGPUTelemetry builds the sparklines of the units a running workbench
// holds: a whole GPU from the sampler's history (every sample; memory in
// percent of used + free); a MIG instance or a shared slice's holder from
// the unit's own per-minute series of the last hour (the instance's own
// readings; the holder's own processes'), never the whole GPU's figures.
func (h *Handler) wbGPUTelemetry(ctx context.Context, wb *models.Workbench, gpuNames map[string]string) []templates.WBGPUTelemetry {
	if wb.State != models.StateRunning {
		return nil
	}
	var tel orchestrator.WBTelemetry
	units := map[string]orchestrator.WBUnitTelemetry{}
	if hasSharedUnits(wb) {
		var err error
		if tel, err = h.wbs.WorkbenchTelemetry(ctx, wb); err != nil {
			h.log.Warn("workbench telemetry", "workbench", wb.ID, "err", err)
		}
		for _, u := range tel.Units {
			units[u.Kind+"\x00"+u.UUID] = u
		}
	}
	var out []templates.WBGPUTelemetry
	seen := map[string]bool{}
	for _, u := range wb.Units {
		if u.Kind == models.UnitGPU || u.Kind == "" || seen[u.Kind+u.UUID] {
			continue
		}
		seen[u.Kind+u.UUID] = true
		row := h.unitTelemetryRow(ctx, u, units[u.Kind+"\x00"+u.UUID])
		row.Name = gpuNames[u.GPUUUID]
		out = append(out, row)
	}
	if len(out) == 0 {
		totals, _ := h.pool.MemoryMiB(ctx) // nil: totals from the samples alone
		for _, uuid := range wb.GPUs {
			hist := h.pool.History(uuid)
			if n := len(hist); n > 0 && !h.pool.Fresh(hist[n-1].At) {
				// The last reading is too old to be current (collections
				// failed since): now reads as "could not read".
				hist = append(hist, hist[n-1].Stale())
			}
			row := gpuTelemetryRow(ctx, uuid, hist, totals[uuid])
			row.Name = gpuNames[uuid]
			out = append(out, row)
		}
	}
	return out
}

// hasSharedUnits: wb holds MIG instances or slices.
func hasSharedUnits(wb *models.Workbench) bool {
	for _, u := range wb.Units {
		if u.Kind == models.UnitMIG || u.Kind == models.UnitSlice {
			return true
		}
	}
	return false
}

// gpuTelemetryRow is a whole GPU's row; deviceMiB is its memory as the
// inventory reads it (the /gpus page's total), 0 when unknown. A sample's
// used plus free is the total where the device's is unknown: a driver that
// reads free memory as 0 showed "0.0 / 0.0 GiB" here beside /gpus' 80 GiB.
func gpuTelemetryRow(ctx context.Context, uuid string, hist []gpu.Sample, deviceMiB uint64) templates.WBGPUTelemetry {
	g := templates.WBGPUTelemetry{UUID: uuid, Now: i18n.T(ctx, "no reading yet")}
	totalOf := func(s gpu.Sample) uint64 {
		if deviceMiB > 0 {
			return deviceMiB
		}
		return s.MemUsedMiB + s.MemFreeMiB
	}
	for _, s := range hist {
		if s.Readable(gpu.FieldUtil) {
			g.UtilPoints = append(g.UtilPoints, float64(s.UtilPercent))
		}
		if total := totalOf(s); s.Readable(gpu.FieldMemory) && total > 0 {
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
			g.MemNow = fmt.Sprintf("%.1f / %.1f GiB", float64(last.MemUsedMiB)/1024, float64(totalOf(last))/1024)
		}
	}
	return g
}

// unitTelemetryRow is a MIG instance's or slice holder's row: its own
// last hour, one point a minute (minutes with no readable sample left
// out, never drawn as 0). Memory is in percent of the instance's memory,
// or for a slice of the GPU's.
func (h *Handler) unitTelemetryRow(ctx context.Context, u models.Unit, ut orchestrator.WBUnitTelemetry) templates.WBGPUTelemetry {
	g := templates.WBGPUTelemetry{UUID: u.UUID, Now: i18n.T(ctx, "no reading yet")}
	totalMiB := uint64(0)
	if u.Kind == models.UnitMIG {
		g.Label = i18n.T(ctx, "MIG instance %s", u.Profile)
		if ut.HasLatest && ut.Latest.Readable(gpu.FieldMemory) {
			totalMiB = ut.Latest.MemUsedMiB + ut.Latest.MemFreeMiB
		}
	} else {
		g.Label = i18n.T(ctx, "shared GPU: your processes only")
		if hist := h.pool.History(u.GPUUUID); len(hist) > 0 && hist[len(hist)-1].Readable(gpu.FieldMemory) {
			last := hist[len(hist)-1]
			totalMiB = last.MemUsedMiB + last.MemFreeMiB
		}
	}
	for _, p := range ut.Series {
		if p.UtilPercent != nil {
			g.UtilPoints = append(g.UtilPoints, *p.UtilPercent)
		}
		if p.MemUsedMiB != nil && totalMiB > 0 {
			g.MemPoints = append(g.MemPoints, 100*float64(*p.MemUsedMiB)/float64(totalMiB))
		}
	}
	if !ut.HasLatest {
		return g
	}
	switch {
	case ut.Latest.Readable(gpu.FieldUtil):
		g.Now = fmt.Sprintf("%d%%", ut.Latest.UtilPercent)
	case u.Kind == models.UnitMIG:
		// Most drivers give no utilisation per MIG instance: not 0%.
		g.Now = i18n.T(ctx, "not available for a MIG instance")
	default:
		g.Now = i18n.T(ctx, "could not read")
	}
	if ut.Latest.Readable(gpu.FieldMemory) {
		if totalMiB > 0 {
			g.MemNow = fmt.Sprintf("%.1f / %.1f GiB", float64(ut.Latest.MemUsedMiB)/1024, float64(totalMiB)/1024)
		} else {
			g.MemNow = fmt.Sprintf("%.1f GiB", float64(ut.Latest.MemUsedMiB)/1024)
		}
	}
	if ut.ShareBasis != "" {
		g.EnergyNote = i18n.T(ctx, "Its energy is a share of the GPU's measured energy (%s).", shareBasisText(ctx, ut.ShareBasis))
	}
	return g
}

// shareBasisText says how a unit's energy share is made.
func shareBasisText(ctx context.Context, basis string) string {
	switch basis {
	case orchestrator.ShareMIGUtil:
		return i18n.T(ctx, "by compute slices and utilisation of the GPU's MIG instances")
	case orchestrator.ShareMIGSlices:
		return i18n.T(ctx, "by compute slices of the GPU's MIG instances")
	case orchestrator.ShareProcessUtil:
		return i18n.T(ctx, "by your processes' share of the GPU's utilisation")
	default:
		return i18n.T(ctx, "an equal part per slice")
	}
}
