package orchestrator

import (
	"context"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// A running workbench's container paused outside the portal (`docker
// pause`) still reads "running" to the engine, and Jupyter's socket still
// accepts connections: requests through the proxy hang with no answer.
// The reconciler records it (Workbench.PausedAt, on a pause or unpause
// event at once, else within a reconciliation), the proxy answers
// ErrPaused from that record without asking the engine, and the pages say
// so. It stays running and metered: its GPUs stay held by the container,
// which ran and can be unpaused at any moment (docs/ux-choices.md).

// notePaused records, or forgets, that wb's running container c is paused,
// warning once when it is found paused.
func (m *Manager) notePaused(ctx context.Context, wb *models.Workbench, owner *models.User, c runtime.ContainerInfo) {
	switch {
	case c.Paused && wb.PausedAt == nil:
		now := m.now().UTC()
		m.log.Warn("reconcile: workbench container paused outside the portal (docker pause); the proxy answers 503 until it is unpaused, and it is still charged",
			"id", wb.ID, "name", wb.Name, "owner", owner.Username, "container", c.Name)
		m.setFields(ctx, wb.ID, models.WorkbenchFields{PausedAt: &now})
	case !c.Paused && wb.PausedAt != nil:
		m.log.Info("reconcile: workbench container unpaused", "id", wb.ID, "paused_since", *wb.PausedAt)
		m.setFields(ctx, wb.ID, models.WorkbenchFields{ClearPaused: true})
	}
}
