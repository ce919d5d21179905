package orchestrator

import "time"

// SetClock replaces the time the culler and the deadline computation read
// (tests move it instead of sleeping). Call it before Run.
func (m *Manager) SetClock(now func() time.Time) { m.clock = now }

func (m *Manager) now() time.Time { return m.clock().UTC() }

// Now is the manager's clock (injectable with SetClock), for pages that
// show times the culler acts on.
func (m *Manager) Now() time.Time { return m.now() }
