package orchestrator

import (
	"context"
	"time"
)

// ShutdownGrace bounds how long a closing portal waits for its background
// work (Shutdown): below docker compose's stop_grace_period (30 s), so the
// database is closed by the portal, not under it by a SIGKILL.
const ShutdownGrace = 20 * time.Second

// Shutdown ends the manager's background work before the portal closes the
// database and the engine client under it. Launches in flight (pulling,
// creating, waiting for Jupyter), admins' image tests and pre-pulls and
// queue drains are cancelled: their records stay where they were, and the
// next start takes them up (reconciliation resumes an abandoned launch and
// fails an interrupted image test). Work a person asked for that must not
// be cut half-way — stops and deletions — is waited for. No new background
// work starts once Shutdown has begun.
//
// It returns false when ctx ended first (work still running then is cut
// by the process's exit, as before). Without it, a launch went on after
// the database was closed: it made the install's network after a test had
// removed its objects (a leaked network holds one of the engine's address
// pools for good), and in production logged "database is closed" errors.
func (m *Manager) Shutdown(ctx context.Context) bool {
	m.endLife()
	done := make(chan struct{})
	go func() {
		m.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		m.log.Warn("shutdown: background work still running; the next start finishes it", "err", ctx.Err())
		return false
	}
}

// closing reports whether Shutdown has begun.
func (m *Manager) closing() bool { return m.life.Err() != nil }
