package orchestrator

import (
	"context"
	"errors"
	"time"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// StopError is a stop that could not be finished (the engine did not answer,
// the container would not stop). The workbench stays "stopping" with the
// message recorded, its GPUs still bound (the container may still use them);
// reconciliation retries, and the page offers "Retry stop" and "Force stop".
type StopError struct {
	Message string
	Err     error // the cause, when there is one (the engine not reachable)
}

func (e *StopError) Error() string { return e.Message }
func (e *StopError) Unwrap() error { return e.Err }

// UnrecordedStopError is a stop whose container was stopped while the
// database could not record it (its disk full or read-only): the workbench
// shows its last recorded state until reconciliation records the stop, at
// the container's exit (which is where its charges end).
type UnrecordedStopError struct {
	Err error // the database's refusal (models.Unwritable)
}

func (e *UnrecordedStopError) Error() string {
	return reasonf("the workbench was stopped, but the portal could not record it because its database cannot be written (its disk is full or read-only; an administrator has to free or fix it); it shows as stopped, not recorded yet, until the stop is recorded by itself, and it is charged only up to the stop")
}
func (e *UnrecordedStopError) Unwrap() error { return e.Err }

// StopPendingError refuses what cannot be done yet to a workbench whose
// stop was carried out but not recorded (UnrecordedStop) while the
// database still cannot be written: a start, a delete, a save, a restart
// with GPUs, a reset of its owner's home. Its record says running until
// the stop is recorded, so the bare storage refusal or "it is running"
// ("stop it first") contradicted its page, which shows it stopped.
type StopPendingError struct {
	Message string
	Err     error // the database's refusal (models.Unwritable)
}

func (e *StopPendingError) Error() string { return e.Message }
func (e *StopPendingError) Unwrap() error { return e.Err }

// settleFirst records id's stop not recorded yet, if it has one, before
// anything else is done to it; while the database still refuses, the
// action is refused with StopPendingError.
func (m *Manager) settleFirst(ctx context.Context, id string) error {
	pending, err := m.settleUnrecordedStop(ctx, id)
	switch {
	case !pending:
		return nil
	case models.Unwritable(err):
		return &StopPendingError{Err: err, Message: reasonf("its stop is carried out but not recorded yet, because the portal's database cannot be written (its disk is full or read-only; an administrator has to free or fix it); the stop is recorded by itself once it can be, and then this can be done")}
	}
	return err
}

// Stop stops a workbench: its GPUs are released at once, the home volume
// stays. Stopping is always allowed (it lowers cost). reason is shown to the
// user ("" for their own stop).
//
// The stop runs to its end in the manager whatever happens to ctx: a page
// reload or a closed tab once cut a stop half-way and left the container
// running, its GPUs bound and its cost growing. ctx only bounds how long the
// caller waits for the result; when it ends first, Stop returns its error
// while the stop goes on.
func (m *Manager) Stop(ctx context.Context, id, reason string) error {
	return m.stopDetached(ctx, id, reason, false)
}

// ForceStop is Stop without the grace period: the container is killed at
// once (and removed if even that fails). For a stop that failed or hangs.
func (m *Manager) ForceStop(ctx context.Context, id, reason string) error {
	return m.stopDetached(ctx, id, reason, true)
}

// StopByAdmin stops id (or takes it out of the queue) for an
// administrator, for reason, and tells its owner, who did not ask for it.
// Like Stop it runs to its end whatever happens to ctx.
func (m *Manager) StopByAdmin(ctx context.Context, id, reason string) error {
	return m.stopByAdmin(ctx, id, reason, false)
}

// ForceStopByAdmin is StopByAdmin without the grace period, as ForceStop
// is for the owner: for a stop that failed or hangs.
func (m *Manager) ForceStopByAdmin(ctx context.Context, id, reason string) error {
	return m.stopByAdmin(ctx, id, reason, true)
}

func (m *Manager) stopByAdmin(ctx context.Context, id, reason string, force bool) error {
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err != nil {
		return err
	}
	_, err = m.stopTellingAs(ctx, wb, reason, force)
	return err
}

// stopTelling stops wb for reason, detached from ctx as Stop is, and tells
// its owner why. did is whether this call did the stop: when the owner, an
// administrator or another pass of the portal stopped it first, the owner
// is not told a second, different story.
func (m *Manager) stopTelling(ctx context.Context, wb *models.Workbench, reason string) (did bool, err error) {
	return m.stopTellingAs(ctx, wb, reason, false)
}

// stopTellingAs is stopTelling, forced (no grace period) when force.
func (m *Manager) stopTellingAs(ctx context.Context, wb *models.Workbench, reason string, force bool) (did bool, err error) {
	err = m.detached(ctx, func(ctx context.Context) error {
		if did, err = m.stop(ctx, wb.ID, reason, force); err != nil || !did {
			return err
		}
		m.tellOwner(ctx, wb, EventStopped, reasonf("Workbench %s: %s", wb.Name, reason))
		return nil
	})
	return did, err
}

func (m *Manager) stopDetached(ctx context.Context, id, reason string, force bool) error {
	return m.detached(ctx, func(ctx context.Context) error {
		_, err := m.stop(ctx, id, reason, force)
		return err
	})
}

// stop stops id, or takes it out of the queue. did is false when there was
// nothing to do: it had stopped already, or another stop got there first.
func (m *Manager) stop(ctx context.Context, id, reason string, force bool) (did bool, err error) {
	// Stopped already, its record pending: recorded now if it can be;
	// this stop has nothing left to do either way.
	if pending, err := m.settleUnrecordedStop(ctx, id); pending {
		if models.Unwritable(err) {
			return false, &UnrecordedStopError{Err: err}
		}
		return false, err
	}
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err != nil {
		return false, err
	}
	switch wb.State {
	case models.StateStopped, models.StateFailed, models.StatePreempted:
		return false, nil
	case models.StateQueued:
		// Leaving the queue: nothing runs, nothing was charged.
		if done, err := m.cancelQueued(ctx, id, reason); done || err != nil {
			return done, err
		}
	}
	// Wait for a reconciliation (or another stop) of this workbench to
	// finish first; a stop that finished meanwhile makes this one a no-op.
	if wb, err = m.waitClaim(ctx, id); err != nil || wb == nil {
		return false, err
	}
	defer m.release(id)
	return m.stopClaimedAs(ctx, wb, reason, force, models.StateStopped, nil)
}

// waitClaim claims id (even while a launch runs: a stop cancels it), waiting
// for a reconciliation or another stop holding it. It returns the fresh
// record, or nil when the workbench is stopped or failed by then.
func (m *Manager) waitClaim(ctx context.Context, id string) (*models.Workbench, error) {
	for !m.claim(id, true) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err != nil || wb.State == models.StateStopped || wb.State == models.StateFailed || wb.State == models.StatePreempted {
		m.release(id)
		return nil, err
	}
	return wb, nil
}

// stopClaimed does the stop; the caller holds the workbench's claim. The
// progress shown while stopping moves with the real steps (begun, container
// stopped, metering closed), never the 100 % of the running state.
func (m *Manager) stopClaimed(ctx context.Context, wb *models.Workbench, reason string, force bool) error {
	_, err := m.stopClaimedAs(ctx, wb, reason, force, models.StateStopped, nil)
	return err
}

// stopClaimedAs is stopClaimed ending in final (stopped, or preempted) and,
// when then is set, back in the queue in the same transaction. did is false
// when the workbench had stopped or failed meanwhile.
func (m *Manager) stopClaimedAs(ctx context.Context, wb *models.Workbench, reason string, force bool, final string, then *models.Requeue) (did bool, err error) {
	id := wb.ID
	if err := m.transition(ctx, id, models.Transition{From: models.ActiveStates, To: models.StateStopping, Progress: 10, Reason: reason,
		Set: models.WorkbenchFields{StopError: new("")}}); err != nil {
		if errors.Is(err, models.ErrStateChanged) {
			return false, nil // stopped or failed meanwhile: nothing left to stop
		}
		if models.Unwritable(err) && final == models.StateStopped && then == nil {
			// The database cannot record anything (its disk is full or
			// read-only). Refusing the stop kept the container running
			// and its meter open: the owner's stop, the budget's and the
			// culler's were all lost while charges went on. The engine's
			// stop needs no record; reconciliation records it, at the
			// container's exit, once the database can be written.
			return true, m.stopUnrecorded(ctx, id, reason, force, err)
		}
		return false, err
	}
	// A launch still under way is cancelled first, so it cannot bring the
	// workbench back to running behind this stop.
	m.cancelLaunch(id)
	finished, err := m.stopContainer(ctx, id, force)
	if err != nil {
		serr := m.stopFailed(ctx, id, reason, reasonf("could not stop the container: %v", err))
		serr.Err = err // errors.Is(…, ErrEngineUnavailable): the caller is told to wait, not to force
		return true, serr
	}
	m.stopProgress(ctx, id, 60, reason)
	if err := m.closeInterval(ctx, id, finished, "stopped"); err != nil {
		return true, m.stopFailed(ctx, id, reason, reasonf("could not close the usage record: %v", err))
	}
	m.stopProgress(ctx, id, 80, reason)
	if err := m.store.ReleaseGPUs(ctx, id); err != nil {
		return true, m.stopFailed(ctx, id, reason, reasonf("could not release the GPUs: %v", err))
	}
	set := models.WorkbenchFields{Endpoint: new(""), StoppedAt: &finished, ClearPreempt: true}
	if final == models.StatePreempted {
		// The notice's words go with the notice; the preempted workbench
		// keeps them (its not-running page says what the launch needed).
		set.PreemptedFor = new(wb.PreemptFor)
	}
	if err := m.transition(ctx, id, models.Transition{From: []string{models.StateStopping}, To: final, Reason: reason,
		Set: set, Requeue: then}); err != nil {
		return true, err
	}
	m.log.Info("workbench stopped", "id", id, "reason", reason, "force", force, "state", final)
	m.kickDrain() // its GPUs are free: the queue may move
	return true, nil
}

// stopUnrecorded stops id's container without a record (the caller holds
// the claim; dbErr is the database's refusal) and leaves the stop for
// reconciliation: its reason, and when the container stopped.
func (m *Manager) stopUnrecorded(ctx context.Context, id, reason string, force bool, dbErr error) error {
	m.log.Error("stop: the database cannot be written; stopping the container anyway, the stop is recorded when it can be", "id", id, "err", dbErr)
	m.cancelLaunch(id)
	at, err := m.stopContainer(ctx, id, force)
	if err != nil {
		return &StopError{Message: reasonf("could not stop the container: %v", err), Err: err}
	}
	// The first stop is the one that happened: a later one (the budget's,
	// the culler's, the owner's second click) found the container stopped
	// already and must not replace its reason or its time.
	m.stoppedUnrecorded.LoadOrStore(id, UnrecordedStop{Reason: reason, At: at.UTC()})
	return &UnrecordedStopError{Err: dbErr}
}

// UnrecordedStop is a stop carried out (the container stopped) that the
// database could not record yet: Reason is the stop's (as it will be
// recorded), At when the container stopped, where its charges end.
type UnrecordedStop struct {
	Reason string
	At     time.Time
}

// UnrecordedStop returns id's stop not recorded yet, if it has one: its
// page shows the workbench stopped, not the running its record still
// says, until reconciliation records it.
func (m *Manager) UnrecordedStop(id string) (UnrecordedStop, bool) {
	v, ok := m.stoppedUnrecorded.Load(id)
	if !ok {
		return UnrecordedStop{}, false
	}
	return v.(UnrecordedStop), true
}

// unrecordedStopEnd is when id's unrecorded stop ended its run, for the
// biller's costs (Billing.openEnd).
func (m *Manager) unrecordedStopEnd(id string) (time.Time, bool) {
	u, ok := m.UnrecordedStop(id)
	return u.At, ok
}

// recordUnrecordedStop records a stop that stopUnrecorded made: the run
// closes when the container stopped and the workbench is stopped with the
// stop's reason. c is the container as the caller saw it (found false:
// gone); a container running again (started behind the portal's back)
// drops the stop: the run went on, and it is adopted as running. It
// reports whether it had a stop to record, and the error of a recording
// that failed (the next reconciliation tries again).
func (m *Manager) recordUnrecordedStop(ctx context.Context, wb *models.Workbench, c runtime.ContainerInfo, found bool) (bool, error) {
	u, ok := m.UnrecordedStop(wb.ID)
	if !ok {
		return false, nil
	}
	if found && (c.Running || c.State == runtime.StatePending) {
		m.stoppedUnrecorded.Delete(wb.ID)
		m.log.Warn("reconcile: a container stopped while the database could not record it runs again (started outside the portal); its stop is dropped", "id", wb.ID)
		return false, nil
	}
	// The time the stop saw (Docker's exit), which a container removed
	// since, or an engine that no longer knows it, cannot give again; the
	// run ends there, not at its last heartbeat.
	at := u.At
	if at.IsZero() {
		at = c.FinishedAt
	}
	if at.IsZero() {
		at = time.Now().UTC()
	}
	if err := m.closeInterval(ctx, wb.ID, at, "stopped"); err != nil {
		return true, err
	}
	if err := m.store.ReleaseGPUs(ctx, wb.ID); err != nil {
		m.log.Error("release GPUs", "id", wb.ID, "err", err)
		return true, err
	}
	if err := m.transition(ctx, wb.ID, models.Transition{From: []string{wb.State}, To: models.StateStopped, Reason: u.Reason,
		Set: models.WorkbenchFields{Endpoint: new(""), StoppedAt: &at, ClearPreempt: true}}); err != nil {
		return true, err
	}
	m.stoppedUnrecorded.Delete(wb.ID)
	m.log.Info("workbench stopped (recorded now: the database could not be written at the stop)", "id", wb.ID, "reason", u.Reason, "at", at)
	m.kickDrain()
	return true, nil
}

// settleUnrecordedStop records id's stop not recorded yet, if it has one,
// before anything else is done to it (a start, a delete, another stop
// once the database can be written again, ahead of the next
// reconciliation). pending reports that it is still not recorded; err
// then says why (models.Unwritable: the database still refuses).
func (m *Manager) settleUnrecordedStop(ctx context.Context, id string) (pending bool, err error) {
	if _, ok := m.UnrecordedStop(id); !ok {
		return false, nil
	}
	wb, err := m.waitClaim(ctx, id)
	if err != nil {
		return true, err
	}
	if wb == nil {
		return false, nil // recorded meanwhile
	}
	defer m.release(id)
	c, err := m.inspectOwn(ctx, wb)
	found := err == nil
	if err != nil && !errors.Is(err, runtime.ErrNotFound) {
		return true, err
	}
	if _, err := m.recordUnrecordedStop(ctx, wb, c, found); err != nil {
		return true, err
	}
	return false, nil
}

// stopProgress moves the progress of a stop the caller drives (it holds the
// claim, so the workbench stays stopping).
func (m *Manager) stopProgress(ctx context.Context, id string, progress int, reason string) {
	_ = m.transition(ctx, id, models.Transition{From: []string{models.StateStopping}, To: models.StateStopping, Progress: progress, Reason: reason})
}

// stopContainer stops the workbench's container (found by its recorded id,
// which a rename does not change, else by name: a cancelled launch may have
// created it without recording its id) and returns when it finished by
// Docker's clock. A container that is gone is stopped.
func (m *Manager) stopContainer(ctx context.Context, id string, force bool) (time.Time, error) {
	now := time.Now().UTC()
	info, err := m.inspectOwnByID(ctx, id)
	if errors.Is(err, runtime.ErrNotFound) {
		return now, nil
	}
	if err != nil {
		return time.Time{}, err
	}
	grace := m.opt.StopGrace
	if force {
		grace = 0
	}
	if err := m.rt.Stop(ctx, info.ID, grace); err != nil && !errors.Is(err, runtime.ErrNotFound) {
		if !force {
			return time.Time{}, err
		}
		m.log.Warn("force stop: kill failed; removing the container", "id", id, "err", err)
		if err := m.rt.Remove(ctx, info.ID); err != nil {
			return time.Time{}, err
		}
		m.setFields(ctx, id, models.WorkbenchFields{ContainerID: new("")})
		return now, nil
	}
	m.keepExitLogs(ctx, id, info.ID)
	info, err = m.rt.Inspect(ctx, info.ID)
	if errors.Is(err, runtime.ErrNotFound) {
		return now, nil
	}
	if err != nil {
		return time.Time{}, err
	}
	if info.Running {
		return time.Time{}, errors.New(reasonf("the container %s is still running after the stop", info.Name))
	}
	m.setFields(ctx, id, models.WorkbenchFields{ContainerID: new(info.ID)})
	if info.FinishedAt.IsZero() {
		return now, nil
	}
	return info.FinishedAt, nil
}

// stopFailed records why a stop could not finish; the workbench stays
// stopping (its GPUs bound) until a retry, a force stop or reconciliation
// finishes it.
func (m *Manager) stopFailed(ctx context.Context, id, reason, msg string) *StopError {
	m.log.Warn("stop failed", "id", id, "err", msg)
	_ = m.transition(ctx, id, models.Transition{From: []string{models.StateStopping}, To: models.StateStopping, Reason: reason,
		Set: models.WorkbenchFields{StopError: new(msg)}})
	return &StopError{Message: msg}
}

// StopAllByAdmin starts StopByAdmin for each id and returns at once: an
// instructor stops a class's workbenches together (15 stops with their
// grace periods, one after the other, outlast a page's request). Each stop
// runs in the manager to its end whatever happens to ctx (Wait waits for
// them), telling its owner; a failure is logged, and the workbench shows
// it as a single stop's failure does (stopping, Retry and Force stop).
func (m *Manager) StopAllByAdmin(ctx context.Context, ids []string, reason string) {
	wctx := context.WithoutCancel(ctx)
	for _, id := range ids {
		m.wg.Add(1) // before returning: Wait must not miss a stop not yet begun
		go func() {
			defer m.wg.Done()
			if err := m.stopByAdmin(wctx, id, reason, false); err != nil {
				m.log.Error("stop by an administrator, with others", "id", id, "err", err)
			}
		}()
	}
}
