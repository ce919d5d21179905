package orchestrator

import (
	"context"
	"sync"
	"time"

	"workbench/models"
)

// A workbench's maximum runtime is enforced at its instant, not at the
// next cull pass: the pass, every CullEvery (default a minute), arms a
// timer for each run whose limit falls before the following pass, and the
// timer checks again when it fires (an extension "+1 h" in between, or a
// stop, leaves nothing to do). Without it a run went on, and was billed,
// for up to a cull interval past its limit.

// runtimeTimers holds one timer per workbench whose limit is near.
type runtimeTimers struct {
	mu     sync.Mutex
	timers map[string]*time.Timer
}

func (rt *runtimeTimers) set(id string, d time.Duration, fn func()) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.timers == nil {
		rt.timers = map[string]*time.Timer{}
	}
	if t := rt.timers[id]; t != nil {
		t.Stop()
	}
	rt.timers[id] = time.AfterFunc(d, fn)
}

func (rt *runtimeTimers) done(id string) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	delete(rt.timers, id)
}

// stopAll cancels every timer (the portal shutting down).
func (rt *runtimeTimers) stopAll() {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for id, t := range rt.timers {
		t.Stop()
		delete(rt.timers, id)
	}
}

// armRuntimeStop sets wb's timer when its maximum runtime ends before the
// next cull pass (at now + CullEvery).
func (m *Manager) armRuntimeStop(ctx context.Context, wb *models.Workbench, now time.Time) {
	limit, _ := m.runtimeRule(ctx, wb).Limit()
	if limit <= 0 || wb.StartedAt == nil {
		return
	}
	at := wb.StartedAt.Add(limit)
	if !at.Before(now.Add(m.opt.CullEvery)) {
		return
	}
	id := wb.ID
	m.runtimeStops.set(id, at.Sub(now), func() {
		defer m.runtimeStops.done(id)
		m.runtimeStopDue(context.Background(), id)
	})
}

// runtimeStopDue stops workbench id if, now, it is running past its
// maximum runtime.
func (m *Manager) runtimeStopDue(ctx context.Context, id string) {
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err != nil || wb.State != models.StateRunning {
		return
	}
	reason := runtimeReason(m.runtimeRule(ctx, wb), wb, m.now())
	if reason == "" {
		return // extended, or the clock disagrees: the next pass looks again
	}
	m.log.Info("culling", "id", wb.ID, "reason", reason)
	if did, err := m.stopTelling(ctx, wb, reason); err != nil {
		m.log.Warn("max runtime: stop", "id", wb.ID, "err", err)
	} else if did {
		m.metrics.culled(CullMaxRuntime)
	}
}
