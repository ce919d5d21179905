package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
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
	now := time.Now().UTC()
	for i := range running {
		wb := &running[i]
		if reason := m.cullReason(ctx, wb, now); reason != "" {
			m.log.Info("culling", "id", wb.ID, "reason", reason)
			if err := m.Stop(ctx, wb.ID, reason); err != nil {
				m.log.Warn("cull: stop", "id", wb.ID, "err", err)
			}
		}
	}
}

func (m *Manager) cullReason(ctx context.Context, wb *models.Workbench, now time.Time) string {
	if limit, whose := m.maxRuntime(ctx, wb); limit > 0 && wb.StartedAt != nil && now.Sub(*wb.StartedAt) >= limit {
		return fmt.Sprintf("stopped: reached %s maximum runtime of %s", whose, limit)
	}
	if wb.IdleTimeoutS <= 0 {
		return ""
	}
	last := latest(wb.StartedAt, wb.LastActivityAt)
	if t := m.activity.get(wb.ID); t.After(last) {
		last = t
	}
	busy, jupyterLast := m.jupyterActivity(ctx, wb)
	if busy {
		return ""
	}
	if jupyterLast.After(last) {
		last = jupyterLast
	}
	idle := time.Duration(wb.IdleTimeoutS) * time.Second
	if now.Sub(last) >= idle {
		return fmt.Sprintf("stopped after %s without activity (idle timeout)", idle.Round(time.Second))
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
	if wb.Endpoint == "" {
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

// maxRuntime is the shorter of the flavor's and the owner's quota maximum
// runtime (0 = none), and whose limit it is.
func (m *Manager) maxRuntime(ctx context.Context, wb *models.Workbench) (time.Duration, string) {
	var limit time.Duration
	whose := ""
	if fl, err := m.store.FlavorByID(ctx, wb.FlavorID); err == nil && fl.MaxRuntimeS > 0 {
		limit, whose = time.Duration(fl.MaxRuntimeS)*time.Second, "the flavor's"
	}
	if lim, err := m.store.EffectiveQuota(ctx, wb.OwnerID); err == nil && lim.MaxRuntimeHours != nil {
		q := time.Duration(*lim.MaxRuntimeHours) * time.Hour
		if limit == 0 || q < limit {
			limit, whose = q, "your quota's"
		}
	}
	return limit, whose
}
