package orchestrator

import (
	"context"
	"time"

	"workbench/models"
)

// GPUIdle is where a running workbench stands with GPU-idle release: a
// workbench whose GPU units all stayed below the sampler's idle threshold for
// its flavor's GPU-idle timeout is stopped (home kept), after a warning on
// its page. A GPU that could not be read is never idle, so the release
// never fires on missing data.
type GPUIdle struct {
	// Timeout is the flavor's GPU-idle timeout (0: GPU-idle release off).
	Timeout time.Duration
	// ThresholdPercent is the utilisation below which a GPU is idle.
	ThresholdPercent uint32
	// Since is when every GPU of the workbench has been idle since (zero:
	// some GPU is busy or unreadable, or there is no reading yet).
	Since  time.Time
	For    time.Duration
	StopAt time.Time
	// Warn is true once the workbench has been GPU-idle for half its
	// timeout: the page then says when it will be stopped.
	Warn bool
}

// GPUIdle reports the GPU-idle release state of wb at the manager's now.
func (m *Manager) GPUIdle(ctx context.Context, wb *models.Workbench) GPUIdle {
	return m.gpuIdle(ctx, wb, m.now())
}

func (m *Manager) gpuIdle(ctx context.Context, wb *models.Workbench, now time.Time) GPUIdle {
	var g GPUIdle
	if m.pool == nil {
		return g
	}
	s := m.pool.sampler
	if wb.State != models.StateRunning || len(wb.GPUs) == 0 || s == nil || wb.StartedAt == nil {
		return g
	}
	fl, err := m.store.FlavorByID(ctx, wb.ShapeFlavorID())
	if err != nil || fl.GPUIdleTimeoutS <= 0 {
		return g
	}
	g.Timeout = time.Duration(fl.GPUIdleTimeoutS) * time.Second
	g.ThresholdPercent = s.IdleThreshold()
	// Idle only counts from this run's start: a GPU idle while free was
	// nobody's idleness.
	since := *wb.StartedAt
	// Each unit by its own figures: a slice holder by its processes' SM
	// utilisation, a MIG instance by its own (unread on most drivers:
	// never idle), a whole GPU by the GPU's.
	units := wb.Units
	if len(units) == 0 {
		for _, uuid := range wb.GPUs {
			units = append(units, models.Unit{Kind: models.UnitGPU, UUID: uuid})
		}
	}
	for _, u := range units {
		t, ok := m.unitIdleSince(wb, u)
		if !ok {
			return g // busy or unreadable
		}
		if t.After(since) {
			since = t
		}
	}
	g.Since = since
	if d := now.Sub(since); d > 0 {
		g.For = d
	}
	g.StopAt = since.Add(g.Timeout)
	g.Warn = g.For >= g.Timeout/2
	return g
}

// gpuIdleReason is why wb is stopped for GPU idleness at now, or "".
func (m *Manager) gpuIdleReason(ctx context.Context, wb *models.Workbench, now time.Time) string {
	g := m.gpuIdle(ctx, wb, now)
	if g.Timeout <= 0 || g.Since.IsZero() || now.Before(g.StopAt) {
		return ""
	}
	return reasonf("stopped: GPU idle (below %d%% utilisation for %s, the GPU-idle timeout); home kept",
		g.ThresholdPercent, minutesText(g.Timeout))
}

// minutesText is "42 min" (whole minutes, rounded down).
func minutesText(d time.Duration) string { return reasonf("%d min", int64(d/time.Minute)) }
