package orchestrator

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"workbench/models"
)

// Cull stops running workbenches that have been idle for their idle timeout
// (no proxy traffic, no busy kernel, no activity Jupyter saw) or that reached their flavor's
// maximum runtime. The reason is shown to the user.
func (m *Manager) Cull(ctx context.Context) {
	running, err := m.store.ListWorkbenches(ctx, 0, models.StateRunning)
	if err != nil {
		m.log.Warn("cull: list", "err", err)
		return
	}
	now := m.now()
	for i := range running {
		wb := &running[i]
		if reason, kind := m.cullReason(ctx, wb, now); reason != "" {
			m.log.Info("culling", "id", wb.ID, "reason", reason)
			if did, err := m.stopTelling(ctx, wb, reason); err != nil {
				m.log.Warn("cull: stop", "id", wb.ID, "err", err)
			} else if did {
				m.metrics.culled(kind)
			}
			continue
		}
		m.armRuntimeStop(ctx, wb, now)
		m.armStopSoon(ctx, wb, now)
	}
}

// cullReason is why wb is stopped at now ("" for not) and the kind of
// cull, for the metrics.
func (m *Manager) cullReason(ctx context.Context, wb *models.Workbench, now time.Time) (string, string) {
	if r := runtimeReason(m.runtimeRule(ctx, wb), wb, now); r != "" {
		return r, CullMaxRuntime
	}
	if r := m.gpuIdleReason(ctx, wb, now); r != "" {
		return r, CullGPUIdle
	}
	if wb.IdleTimeoutS <= 0 {
		return "", ""
	}
	busy, jupyterLast := m.jupyterActivity(ctx, wb)
	if busy {
		// A busy kernel is activity now: without this the pages went on
		// promising "stops at 14:10 unless used" at 15:00 while a long
		// cell kept the workbench running, past its own deadline.
		m.activity.touch(wb.ID, now)
		return "", ""
	}
	// Remember what Jupyter saw, so the deadlines the pages show
	// (ComputeDeadlines) count it too.
	m.activity.touch(wb.ID, jupyterLast)
	return m.idleReason(wb, now), CullIdle
}

// runtimeReason is why a run has reached its maximum runtime at now, or "".
func runtimeReason(rule RuntimeRule, wb *models.Workbench, now time.Time) string {
	if limit, whose := rule.Limit(); limit > 0 && wb.StartedAt != nil && !now.Before(wb.StartedAt.Add(limit)) {
		if whose == quotaRuntime {
			return reasonf("stopped: reached your quota's maximum runtime of %s", durationText(limit))
		}
		return reasonf("stopped: reached the flavor's maximum runtime of %s", durationText(limit))
	}
	return ""
}

// idleReason is why a workbench is idle-culled at now, or "": its newest
// recorded activity is at least its idle timeout old.
func (m *Manager) idleReason(wb *models.Workbench, now time.Time) string {
	if wb.IdleTimeoutS <= 0 {
		return ""
	}
	idle := time.Duration(wb.IdleTimeoutS) * time.Second
	if !now.Before(idleStopAt(m.lastActivity(wb), idle)) {
		return reasonf("stopped after %s without activity (idle timeout)", durationText(idle))
	}
	return ""
}

// jupyterActivity asks Jupyter whether a kernel is busy and when it last
// saw activity: its own last_activity (/api/status) covers kernels,
// terminals and API use, including work the proxy cannot see (output of a
// terminal command, a kernel's messages). Both requests carry
// no_track_activity, or asking would itself count as activity. Failures
// count as no activity.
func (m *Manager) jupyterActivity(ctx context.Context, wb *models.Workbench) (busy bool, last time.Time) {
	if wb.Endpoint == "" || wb.PausedAt != nil {
		// Paused outside the portal (paused.go): it cannot answer, and
		// asking would wait out the client's timeout twice, holding up
		// the culling of every workbench after it.
		return false, time.Time{}
	}
	var kernels []struct {
		ExecutionState string    `json:"execution_state"`
		LastActivity   time.Time `json:"last_activity"`
	}
	if m.jupyterGet(ctx, wb, "api/kernels", &kernels) {
		for _, k := range kernels {
			if k.ExecutionState == "busy" {
				busy = true
			}
			if k.LastActivity.After(last) {
				last = k.LastActivity
			}
		}
	}
	var status struct {
		LastActivity time.Time `json:"last_activity"`
	}
	if m.jupyterGet(ctx, wb, "api/status", &status) && status.LastActivity.After(last) {
		last = status.LastActivity
	}
	return busy, last
}

// jupyterGet reads one of Jupyter's JSON APIs without counting as activity.
func (m *Manager) jupyterGet(ctx context.Context, wb *models.Workbench, path string, into any) bool {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet,
		"http://"+wb.Endpoint+BaseURL(wb.ID)+path+"?no_track_activity=1", nil)
	req.Header.Set("Authorization", "token "+wb.Token)
	res, err := m.http.Do(req)
	if err != nil {
		return false
	}
	defer res.Body.Close()
	return res.StatusCode == http.StatusOK && json.NewDecoder(res.Body).Decode(into) == nil
}

func latest(ts ...*time.Time) time.Time {
	var out time.Time
	for _, t := range ts {
		if t != nil && t.After(out) {
			out = *t
		}
	}
	return out
}
