package orchestrator

import (
	"context"
	"strconv"

	"workbench/orchestrator/runtime"
)

// exitReason says why the container c of workbench id ended, found exited
// though the portal had not asked it to stop. "the container exited (code
// 0)" after an operator's `docker stop` (Jupyter ends cleanly on SIGTERM)
// or "(code 137)" after a `docker kill` read as the owner's own code
// crashing: a stop from outside says so.
func (m *Manager) exitReason(ctx context.Context, id string, c runtime.ContainerInfo) string {
	switch {
	case c.OOMKilled:
		return reasonf("the container ran out of memory and was killed")
	case m.stoppedOutside(ctx, id, c):
		return reasonf("stopped outside the portal (by the server's operator or the engine)")
	default:
		return reasonf("the container exited (code %s)", strconv.Itoa(c.ExitCode))
	}
}

// stoppedOutside reports whether c was stopped by someone else than the
// portal rather than exiting by itself: killed by SIGKILL or SIGTERM (exit
// 137 or 143, not for lack of memory: PID 1 of a container cannot be sent
// those from inside it), or a kill or stop in the engine's history during
// this run (`docker stop` of a process that exits 0 on SIGTERM).
func (m *Manager) stoppedOutside(ctx context.Context, id string, c runtime.ContainerInfo) bool {
	if c.ExitCode == 137 || c.ExitCode == 143 {
		return true
	}
	if c.StartedAt.IsZero() || c.FinishedAt.IsZero() {
		return false
	}
	asked, err := m.rt.StopAsked(ctx, m.installID, id, c.StartedAt, c.FinishedAt)
	if err != nil {
		m.log.Warn("reconcile: engine event history", "id", id, "err", err)
		return false
	}
	return asked
}
