package orchestrator

import "time"

// SetClock replaces the time the culler and the deadline computation read
// (tests move it instead of sleeping). Call it before Run.
func (m *Manager) SetClock(now func() time.Time) { m.clock = now }

func (m *Manager) now() time.Time { return m.clock().UTC() }
