package orchestrator

import (
	"context"
	"time"

	"workbench/models"
)

// priorityClass resolves the class a launch runs in (docs/scheduling.md):
// the named one, else the highest preemptible class when Preemptible is
// asked, else the default — the flavor's, else the highest of the owner's
// groups', else the global one. Users may choose any class up to that
// default's rank; classes above it are for administrators.
func (m *Manager) priorityClass(ctx context.Context, owner *models.User, fl *models.Flavor, req LaunchRequest) (*models.PriorityClass, error) {
	def, err := m.store.LaunchDefaultClass(ctx, owner.ID, fl.ID)
	if err != nil {
		return nil, err
	}
	name := req.Priority
	if name == "" && req.Preemptible && !def.Preemptible {
		classes, err := m.store.PriorityClasses(ctx)
		if err != nil {
			return nil, err
		}
		for _, c := range classes { // highest rank first
			if c.Preemptible {
				name = c.Name
				break
			}
		}
		if name == "" {
			return nil, &models.ValidationError{Field: "preemptible", Message: reasonf("no preemptible priority class is defined; ask an administrator")}
		}
	}
	cls := def
	if name != "" {
		if cls, err = m.store.PriorityClassFor(ctx, name); err != nil {
			return nil, err
		}
	}
	if req.Preemptible && !cls.Preemptible {
		return nil, &models.ValidationError{Field: "priority", Message: reasonf("the class %q is not preemptible: choose a preemptible class or leave preemptible off", cls.Name)}
	}
	if cls.Rank > def.Rank && !owner.IsAdmin() {
		return nil, &models.ValidationError{Field: "priority", Message: reasonf("the class %q ranks above the default %q: only administrators may choose it", cls.Name, def.Name)}
	}
	return cls, nil
}

// enqueue records a launch as queued (binding nothing) and drains at once:
// with capacity free and nobody ahead it starts right away.
func (m *Manager) enqueue(ctx context.Context, owner *models.User, wb *models.Workbench, check func(*models.Tx) error) (*models.Workbench, error) {
	if wb.QueueExpiresAt == nil { // a launch waiting for its booking's window counts its wait from it
		exp := m.now().Add(m.opt.QueueMaxWait)
		wb.QueueExpiresAt = &exp
	}
	if err := m.store.EnqueueWorkbench(ctx, wb, check); err != nil {
		return nil, m.refusal(ctx, err)
	}
	m.log.Info("launch queued", "id", wb.ID, "owner", owner.Username, "priority", wb.Priority, "preemptible", wb.Preemptible)
	m.events.Publish(Update{ID: wb.ID, State: wb.State, At: time.Now().UTC()})
	if err := m.drain(ctx, wb.ID); err != nil {
		m.log.Warn("queue drain after a launch", "id", wb.ID, "err", err)
	}
	if fresh, err := m.store.WorkbenchByID(ctx, wb.ID); err == nil {
		return fresh, nil
	}
	return wb, nil
}

// wholeGPU reports whether fl asks for whole GPUs. Every GPU flavor can
// queue and be preemptible (each kind of unit is a pool of the scheduler,
// and a victim frees units of its own pool: a MIG instance of its profile,
// a slice of its shared GPU); the CPU-only twin and the GPU watch count
// whole GPUs.
func wholeGPU(fl *models.Flavor) bool {
	return fl.UnitKind == "" || fl.UnitKind == models.UnitGPU
}
