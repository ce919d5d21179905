package orchestrator

import (
	"context"
	"sync/atomic"
	"time"
)

// enginePingFresh is how long a successful ping answers for the pages that
// ask on every view (the home page's "engine not reachable" notice). A
// failure is never reused: the next view asks again.
const enginePingFresh = time.Second

// EngineRecentlyUp is EnginePing, reusing a success younger than a second,
// so a burst of page views costs the engine one ping a second.
func (m *Manager) EngineRecentlyUp(ctx context.Context) error {
	if last := m.enginePingOK.Load(); last != 0 && time.Since(time.Unix(0, last)) < enginePingFresh {
		return nil
	}
	if err := m.rt.Ping(ctx); err != nil {
		return err
	}
	m.enginePingOK.Store(time.Now().UnixNano())
	return nil
}

// enginePingState is embedded in Manager.
type enginePingState struct {
	enginePingOK atomic.Int64 // unix nanos of the last successful ping
}
