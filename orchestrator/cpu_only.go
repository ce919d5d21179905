package orchestrator

import (
	"context"
	"errors"
	"time"

	"workbench/models"
)

// CPUTwin is the CPU-only flavor a workbench of fl may start as (issue 17,
// "start without a GPU"), or a refusal the user can read when the admin
// named none or it is not usable.
func (m *Manager) CPUTwin(ctx context.Context, fl *models.Flavor) (*models.Flavor, error) {
	if fl.GPUCount == 0 {
		return nil, &RefusedError{Code: "no_cpu_twin", Message: reasonf("flavor %s has no GPU: start it normally", fl.Name)}
	}
	if fl.CPUTwinID == 0 {
		return nil, &RefusedError{Code: "no_cpu_twin", Message: reasonf("flavor %s has no CPU-only twin: an administrator can name one on the flavor's page", fl.Name)}
	}
	twin, err := m.store.FlavorByID(ctx, fl.CPUTwinID)
	if errors.Is(err, models.ErrNotFound) || (err == nil && (!twin.Enabled || twin.GPUCount != 0)) {
		return nil, &RefusedError{Code: "no_cpu_twin", Message: reasonf("the CPU-only twin of flavor %s is not available (removed, disabled or given GPUs)", fl.Name)}
	}
	return twin, err
}

// RestartWithGPUs moves a workbench from its CPU-only twin back to its own
// flavor: a stopped one is started with GPUs; a running one is stopped and
// started again with GPUs, the same home and image. When no GPU of the
// flavor's model is free, a whole-GPU flavor's workbench is stopped and
// waits in the queue for them (the queue starts it with its GPUs); a MIG or
// slice flavor, which the queue does not place, is refused before anything
// stops, so the user keeps working in CPU-only mode.
func (m *Manager) RestartWithGPUs(ctx context.Context, id string, owner *models.User) error {
	// A stop not recorded yet is recorded first: the record says running,
	// and a restart of it stopped a container that was stopped already.
	if err := m.settleFirst(ctx, id); err != nil {
		return err
	}
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err != nil {
		return err
	}
	if !wb.CPUOnly() {
		return &ErrState{Message: reasonf("the workbench is not in CPU-only mode, so it already runs with its GPUs; start it if it is stopped")}
	}
	switch wb.State {
	case models.StateStopped, models.StateFailed:
		return m.StartAs(ctx, id, owner, StartOptions{})
	case models.StateRunning:
	default:
		return &ErrState{Message: reasonf("the workbench is %s; wait until it is running or stopped", wb.State)}
	}
	fl, err := m.store.FlavorByID(ctx, wb.FlavorID)
	if err != nil {
		return err
	}
	// Over the home-storage limit the start with GPUs would be refused
	// after the stop: refused before it, so the user keeps the CPU-only
	// run in which they delete files.
	if qe, err := m.store.StorageRefusal(ctx, models.LaunchAsk{UserID: wb.OwnerID, Flavor: fl.Name, GPUs: fl.GPUCount, Start: true}, true); err != nil {
		return err
	} else if qe != nil {
		return m.refusal(ctx, qe)
	}
	if err := m.gpusFree(ctx, fl); err != nil {
		if !waitsForGPUs(fl, err) {
			return err
		}
		// None free: stop the CPU-only run and wait in the queue for the
		// GPUs, with the home kept; the queue starts it with them.
		return m.detached(ctx, func(ctx context.Context) error {
			if _, err := m.stop(ctx, id, restartWithGPUsReason(), false); err != nil {
				return err
			}
			return m.queueForGPUs(ctx, id, reasonf("waiting for GPUs to restart with them"))
		})
	}
	return m.detached(ctx, func(ctx context.Context) error {
		if _, err := m.stop(ctx, id, restartWithGPUsReason(), false); err != nil {
			return err
		}
		if err := m.StartAs(ctx, id, owner, StartOptions{}); err != nil {
			// The GPUs went to someone else between the check and the
			// start: the workbench stays stopped, and says why.
			m.updateWorkbench(ctx, id, map[string]any{"reason": reasonf("stopped to restart with GPUs, but: %s", err.Error())})
			return err
		}
		return nil
	})
}

// restartWithGPUsReason is the reason of the stop that begins a restart
// with GPUs: a portal killed during that stop finishes the restart from it
// (finishRestartWithGPUs), since nothing else records that a start follows.
func restartWithGPUsReason() string { return reasonf("stopping to restart with its GPUs") }

// finishRestartWithGPUs finishes, the claim on wb held, a restart with GPUs
// whose stop a previous process began: the stop, then the queue, which
// starts it with its GPUs (at once when they are free). A MIG or slice
// flavor, which the queue does not place, stays stopped saying so.
func (m *Manager) finishRestartWithGPUs(ctx context.Context, wb *models.Workbench) error {
	if err := m.stopClaimed(ctx, wb, wb.Reason, false); err != nil {
		return err
	}
	fl, err := m.store.FlavorByID(ctx, wb.FlavorID)
	if err != nil {
		return err
	}
	if !wholeGPU(fl) {
		m.updateWorkbench(ctx, wb.ID, map[string]any{"reason": reasonf("stopped to restart with GPUs, but the portal restarted meanwhile: start it again")})
		return nil
	}
	return m.queueForGPUs(ctx, wb.ID, reasonf("waiting for GPUs to restart with them"))
}

// waitsForGPUs says whether a CPU-only workbench going back to flavor fl,
// refused with err, waits in the queue for its GPUs: when err is a
// no_capacity refusal and fl takes whole GPUs.
func waitsForGPUs(fl *models.Flavor, err error) bool {
	var refused *RefusedError
	return errors.As(err, &refused) && refused.Code == "no_capacity" && wholeGPU(fl)
}

// waitsInQueue says whether a start refused with err (refused as the
// caller is told) can wait in the queue: no free units of its kind now, or
// a concurrency limit that frees when the owner's other workbenches stop —
// what a queued launch waits for too. A monthly limit, a budget or an
// image not allowed does not pass by waiting.
func waitsInQueue(err, refused error) bool {
	var r *RefusedError
	return errors.As(refused, &r) && r.Code == "no_capacity" || models.WaitableQuota(err)
}

// queueForGPUs puts stopped workbench id in the queue, in its flavor's own
// shape (the CPU-only run's shape is dropped), with message as its reason,
// for the queue's usual maximum wait; the queue starts it with its GPUs,
// home kept. Not metered while it waits.
func (m *Manager) queueForGPUs(ctx context.Context, id, message string) error {
	exp := m.now().Add(m.opt.QueueMaxWait)
	if err := m.store.RequeueWorkbench(ctx, id, message, &exp); err != nil {
		if errors.Is(err, models.ErrConflict) {
			return &ErrState{Message: reasonf("the workbench is already being started")}
		}
		return err
	}
	m.events.Publish(Update{ID: id, State: models.StateQueued, At: time.Now().UTC()})
	return m.Drain(ctx)
}

// gpusFree refuses (no_capacity) unless enough GPUs for fl are free now.
// Only a hint taken outside the binding transaction: StartAs still binds
// the GPUs under BEGIN IMMEDIATE.
func (m *Manager) gpusFree(ctx context.Context, fl *models.Flavor) error {
	need, err := m.pool.Need(ctx, fl)
	if err != nil || need.Count == 0 {
		return err
	}
	gpus, err := m.pool.List(ctx)
	if err != nil {
		return err
	}
	usable := make(map[string]bool, len(need.Candidates))
	for _, u := range need.Candidates {
		usable[u] = true
	}
	free := 0
	for _, g := range gpus {
		if g.State == GPUFree && usable[g.UUID] {
			free++
		}
	}
	if free < need.Count {
		return &RefusedError{Code: "no_capacity", Message: reasonf("no %d × %s free right now (%d free): the workbench keeps running without GPUs; %s", need.Count, fl.GPUModel, free, m.pool.FreeSummary(ctx))}
	}
	return nil
}
