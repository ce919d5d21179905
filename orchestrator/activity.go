package orchestrator

import (
	"context"
	"sync"
	"time"
)

// activityTracker keeps the newest proxy activity per workbench in memory;
// the manager writes it to the database every few seconds, so the proxy's
// hot path never waits for SQLite.
type activityTracker struct {
	mu    sync.Mutex
	dirty map[string]time.Time
	last  map[string]time.Time
}

func newActivityTracker() *activityTracker {
	return &activityTracker{dirty: map[string]time.Time{}, last: map[string]time.Time{}}
}

func (a *activityTracker) touch(id string, at time.Time) {
	a.mu.Lock()
	if at.After(a.last[id]) {
		a.last[id] = at
		a.dirty[id] = at
	}
	a.mu.Unlock()
}

func (a *activityTracker) get(id string) time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last[id]
}

func (a *activityTracker) take() map[string]time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	d := a.dirty
	a.dirty = map[string]time.Time{}
	return d
}

// Touch records proxy traffic for a workbench (called by the proxy).
func (m *Manager) Touch(id string, at time.Time) { m.activity.touch(id, at) }

func (m *Manager) flushActivity(ctx context.Context) {
	if d := m.activity.take(); len(d) > 0 {
		if err := m.store.TouchWorkbenches(ctx, d); err != nil {
			m.log.Warn("record activity", "err", err)
		}
	}
}
