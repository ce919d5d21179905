package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// HomeInfo is what resetting a user's home volume would touch.
type HomeInfo struct {
	Volume      string
	Workbenches []models.Workbench // every workbench of the user (they all mount it)
	Busy        []string           // names of those not stopped, failed or preempted
	// NotRecorded names those stopped whose stop is not recorded yet
	// (UnrecordedStop): their records still say running, so the reset
	// waits for the record as for a stop; their pages show them stopped,
	// so "stop them first" is not what the owner is told.
	NotRecorded []string
}

// Home describes owner's home volume and the workbenches that use it.
func (m *Manager) Home(ctx context.Context, owner *models.User) (HomeInfo, error) {
	h := HomeInfo{Volume: m.homeVolume(owner.HomeName())}
	wbs, err := m.store.ListWorkbenches(ctx, owner.ID)
	if err != nil {
		return h, err
	}
	h.Workbenches = wbs
	for _, wb := range wbs {
		// A preempted one is stopped too (with auto-resume it would be
		// queued, and the queue could start it: busy).
		if wb.State == models.StateStopped || wb.State == models.StateFailed || wb.State == models.StatePreempted {
			continue
		}
		if _, ok := m.UnrecordedStop(wb.ID); ok {
			h.NotRecorded = append(h.NotRecorded, wb.Name)
			continue
		}
		h.Busy = append(h.Busy, wb.Name)
	}
	return h, nil
}

// ResetHome deletes owner's home volume and everything in it; the next
// launch or start gets a fresh one, prepared for the image's user. It is
// refused while any workbench of the owner is running or on its way (stop
// them first). The stopped containers that mount the volume are removed
// too (the engine will not delete a volume a container refers to); starting
// those workbenches again recreates them.
//
// A workbench stopped while the database could not record it is recorded
// first (as a start or a delete records it); while that cannot be done,
// the reset is refused with StopPendingError: its record says running,
// and the reset never runs under a record that says so.
func (m *Manager) ResetHome(ctx context.Context, owner *models.User) error {
	h, err := m.Home(ctx, owner)
	if err != nil {
		return err
	}
	if len(h.NotRecorded) > 0 {
		for _, wb := range h.Workbenches {
			if pending, err := m.settleUnrecordedStop(ctx, wb.ID); pending && !models.Unwritable(err) {
				return err
			}
		}
		if h, err = m.Home(ctx, owner); err != nil {
			return err
		}
	}
	if err := homeRefusal(h); err != nil {
		return err
	}
	for _, wb := range h.Workbenches {
		if !m.claim(wb.ID, false) {
			return &ErrState{Message: reasonf("workbench %s is being started or stopped right now; try again in a moment", wb.Name)}
		}
		defer m.release(wb.ID)
	}
	// Looked at again under the claims: a start may have won the race
	// (or a stop that could not be recorded).
	if h, err = m.Home(ctx, owner); err != nil {
		return err
	} else if err := homeRefusal(h); err != nil {
		return err
	}
	for _, wb := range h.Workbenches {
		if err := m.rt.Remove(ctx, m.containerName(wb.ID)); err != nil {
			return fmt.Errorf("remove the stopped container of %s: %w", wb.Name, err)
		}
		if wb.ContainerID != "" {
			m.setFields(ctx, wb.ID, models.WorkbenchFields{ContainerID: new("")})
		}
	}
	defer m.homeRemovalBegins(h.Volume)()
	if err := m.rt.RemoveVolume(ctx, h.Volume); err != nil {
		if errors.Is(err, runtime.ErrConflict) {
			return &ErrState{Message: reasonf("the home volume is still in use by a container; stop every workbench and try again")}
		}
		return err
	}
	m.homeRemoved(ctx, owner.ID, h.Volume)
	m.log.Info("home volume reset", "owner", owner.Username, "volume", h.Volume)
	return nil
}

// homeRefusal is why h's volume cannot be reset now: a workbench that is
// not stopped, or one whose stop is not recorded yet; nil when it can be.
func homeRefusal(h HomeInfo) error {
	if len(h.Busy) > 0 {
		return &ErrState{Message: reasonf("stop %s first: a home volume is only reset when no workbench uses it", strings.Join(h.Busy, ", "))}
	}
	if len(h.NotRecorded) > 0 {
		return &StopPendingError{Message: reasonf("the stop of %s is carried out but not recorded yet, because the portal's database cannot be written (its disk is full or read-only; an administrator has to free or fix it); a home volume is only reset once the stops of its workbenches are recorded, which happens by itself", strings.Join(h.NotRecorded, ", "))}
	}
	return nil
}
