package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// Reconcile brings the database in line with the engine (level-triggered:
// it looks at what is, not at what happened):
//   - a running labelled container of an active workbench is adopted;
//   - an active workbench whose container exited or vanished is closed with
//     Docker's exit time and reason, and its GPUs are released;
//   - a workbench in a transitional state that nothing in this process is
//     driving (left by a previous process, or by a request or stop that
//     died) is finished: a launch when its container runs, else failed
//     and cleaned up; a stop is done again;
//   - labelled containers with no record (or a deleted one) are removed once
//     older than OrphanGrace, and until then the GPUs they hold are taken
//     (orphan_units.go);
//   - a delete asked for and cut short (the portal killed half-way) is
//     finished first, and so is a deleted account's erasure (its
//     workbenches and home volume).
func (m *Manager) Reconcile(ctx context.Context) error {
	// First the deletes cut short: their workbenches are not to be
	// reconciled into "stopped" below.
	m.finishPendingDeletes(ctx)
	m.finishPendingUserErasures(ctx)
	containers, err := m.rt.List(ctx, m.installID)
	if err != nil {
		return err
	}
	byID := make(map[string]runtime.ContainerInfo, len(containers))
	for _, c := range containers {
		if id := c.Labels[runtime.LabelID]; id != "" {
			byID[id] = c
		}
	}
	active, err := m.store.ListWorkbenches(ctx, 0, models.ActiveStates...)
	if err != nil {
		return err
	}
	known := map[string]bool{}
	for i := range active {
		wb := &active[i]
		known[wb.ID] = true
		c, ok := byID[wb.ID]
		m.reconcileWorkbench(ctx, wb, c, ok)
	}
	var orphans []runtime.ContainerInfo
	for id, c := range byID {
		if known[id] {
			continue
		}
		if m.reconcileStray(ctx, id, c) {
			orphans = append(orphans, c)
		}
	}
	m.holdOrphans(ctx, orphans)
	return nil
}

// inspectOwn looks at wb's container: by the id on record, which a
// `docker rename` behind the portal's back does not change (looked up by
// name, a renamed container read as vanished: its run was closed and its
// GPUs given to the queue while it still used them), else by the name the
// portal gives it (a launch that created it but had not recorded its id).
func (m *Manager) inspectOwn(ctx context.Context, wb *models.Workbench) (runtime.ContainerInfo, error) {
	if wb.ContainerID != "" {
		info, err := m.rt.Inspect(ctx, wb.ContainerID)
		if !errors.Is(err, runtime.ErrNotFound) {
			return info, err
		}
	}
	return m.rt.Inspect(ctx, m.containerName(wb.ID))
}

// inspectOwnByID is inspectOwn for the workbench id, read fresh.
func (m *Manager) inspectOwnByID(ctx context.Context, id string) (runtime.ContainerInfo, error) {
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err != nil {
		return m.rt.Inspect(ctx, m.containerName(id))
	}
	return m.inspectOwn(ctx, wb)
}

// reconcileOne reconciles a single workbench (on an engine event).
func (m *Manager) reconcileOne(ctx context.Context, id string) {
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err != nil || !wb.Active() {
		return
	}
	var c runtime.ContainerInfo
	found := false
	if wb.ContainerID != "" {
		c, err = m.rt.Inspect(ctx, wb.ContainerID)
		found = err == nil
	}
	m.reconcileWorkbench(ctx, wb, c, found)
}

func (m *Manager) reconcileWorkbench(ctx context.Context, wb *models.Workbench, c runtime.ContainerInfo, found bool) {
	if !m.claim(wb.ID, false) {
		return // a launch or a stop in this process is driving it
	}
	defer m.release(wb.ID)
	// What was listed may be stale by now (a launch may have finished in
	// between): decide on a fresh record and a fresh look at the container.
	wb, err := m.store.WorkbenchByID(ctx, wb.ID)
	if err != nil || !wb.Active() {
		return
	}
	// Before the look: a pause it sees may be a save's (notePaused).
	pauseMark := m.ownPauseMark(wb.ID)
	if info, err := m.inspectOwn(ctx, wb); err == nil {
		c, found = info, true
	} else if errors.Is(err, runtime.ErrNotFound) {
		// Gone now. If the look the caller had (an inspect on the die
		// event) saw it exited, keep that: its FinishedAt is the exact
		// exit, which the event history can only approximate (`docker rm
		// -f` kills and removes between the two looks).
		if !found || c.Running || c.FinishedAt.IsZero() {
			c, found = runtime.ContainerInfo{}, false
		}
	} else {
		return // engine trouble: decide nothing
	}
	// A launch or stop in progress in this process holds the workbench
	// (launching or claimed) and was skipped above. A launch or start
	// writes its record a moment before registering its background work:
	// wait for those in flight, then look again. What is left in a
	// transitional state has nobody driving it (a request that died, a
	// stop that failed, a previous process) and is finished below.
	if wb.Launching() || wb.State == models.StateStopping {
		m.accepting.Lock()
		m.accepting.Unlock() //nolint:staticcheck // a barrier: launches that wrote their record have registered
		if m.isLaunching(wb.ID) {
			return
		}
	}
	owner, err := m.store.UserByID(ctx, wb.OwnerID)
	if err != nil {
		m.log.Warn("reconcile: owner", "id", wb.ID, "err", err)
		return
	}
	switch {
	case m.recordedUnrecordedStop(ctx, wb, c, found):
		// A stop this process made while the database could not record
		// it: recorded now, with its own reason and time (not "stopped
		// outside the portal", nor "the container disappeared" at its last
		// heartbeat when it was removed since), or being tried again.
	case found && c.Running && wb.State == models.StateRunning:
		// Adopt: refresh the address (it can change when the engine
		// restarts, or the network was made again).
		if c.IPs[m.network()] == "" {
			c = m.reconnectRunning(ctx, wb, owner, c)
		}
		host, port := m.rt.Endpoint(c, m.network())
		if ep := fmt.Sprintf("%s:%d", host, port); host != "" && ep != wb.Endpoint {
			m.setFields(ctx, wb.ID, models.WorkbenchFields{Endpoint: new(ep)})
		}
		if c.ID != wb.ContainerID {
			m.setFields(ctx, wb.ID, models.WorkbenchFields{ContainerID: new(c.ID)})
		}
		m.notePaused(ctx, wb, owner, c, pauseMark)
		m.splitRestartedRun(ctx, wb.ID, c)
		// Metering must be open for a running workbench (a crash may have
		// hit between start and opening it); opening is idempotent.
		if err := m.openInterval(ctx, wb.ID, c.StartedAt); err != nil {
			if err := m.stopClaimed(ctx, wb, meteringFailed(err), false); err != nil {
				m.log.Warn("reconcile: stop unmetered", "id", wb.ID, "err", err)
			}
		}
	case found && (c.Running || c.State == runtime.StatePending) && wb.Launching():
		// A previous portal process died mid-launch after starting the
		// container (or, on Kubernetes, lifting its Pod's gate: the Pod
		// may still wait for a node): finish the launch by waiting for
		// Jupyter.
		m.log.Info("reconcile: resuming interrupted launch", "id", wb.ID)
		m.setFields(ctx, wb.ID, models.WorkbenchFields{ContainerID: new(c.ID)})
		m.inBackground(wb.ID, func(ctx context.Context) error {
			return m.waitReady(ctx, wb.ID, c.ID, owner.HomeName(), wb.Token)
		})
	case finishingPreemption(wb):
		// A preemption nobody is driving: it ends preempted, and back in
		// the queue with auto-resume, as it would have.
		m.log.Info("reconcile: finishing interrupted preemption", "id", wb.ID, "auto_resume", wb.AutoResume)
		if err := m.preemptClaimed(ctx, wb); err != nil {
			m.log.Warn("reconcile: preemption", "id", wb.ID, "err", err)
		}
	case wb.State == models.StateStopping && wb.Reason == restartWithGPUsReason():
		// The stop of a restart with GPUs, cut short: the start the owner
		// asked for follows it.
		m.log.Info("reconcile: finishing interrupted restart with GPUs", "id", wb.ID)
		if err := m.finishRestartWithGPUs(ctx, wb); err != nil {
			m.log.Warn("reconcile: restart with GPUs", "id", wb.ID, "err", err)
		}
	case wb.State == models.StateStopping:
		// A stop nobody is driving (a crash, a request that died, a stop
		// that failed): finish it.
		m.log.Info("reconcile: finishing interrupted stop", "id", wb.ID, "stop_error", wb.StopError)
		if err := m.stopClaimed(ctx, wb, wb.Reason, false); err != nil {
			m.log.Warn("reconcile: stop", "id", wb.ID, "err", err)
		}
	case wb.Launching() && (!found || !exitedThisRun(wb, c)) && m.relaunch(ctx, wb, owner, c, found):
		// Mid-launch before its container started (pulling, creating, a
		// container created but not started), nobody driving it: the
		// launch was accepted, so it runs to its end (SPEC §3), from the
		// top. It held its units all along.
	case wb.Launching():
		// Mid-launch with no running container and nobody driving it.
		m.log.Info("reconcile: failing interrupted launch", "id", wb.ID, "state", wb.State)
		reason := reasonf("the launch was interrupted (the portal restarted or lost track of it); start it again")
		if found {
			if exitedThisRun(wb, c) {
				// It ran and exited while nobody watched (a bad start
				// command, say): the reason and the logs say why, as for a
				// launch the portal watched, not "interrupted".
				reason = reasonf("Jupyter exited while starting (exit code %s)", strconv.Itoa(c.ExitCode))
				if out := m.lastOutput(ctx, c.ID); out != "" {
					reason = reasonf("Jupyter exited while starting (exit code %s); last output: %s", strconv.Itoa(c.ExitCode), out)
				}
				m.keepExitLogs(ctx, wb.ID, c.ID)
			}
			_ = m.rt.Remove(ctx, c.ID)
		}
		m.fail(ctx, wb.ID, reason)
	case found && !c.Running:
		m.keepExitLogs(ctx, wb.ID, c.ID)
		m.closeVanished(ctx, wb, c.FinishedAt, m.exitReason(ctx, wb.ID, c))
	case m.copiedRun(ctx, wb):
		// A copy of the install (--new-identity) holds the original's
		// run: its container is the original's and runs on there. The
		// copy's record ends at its last heartbeat, the last the copied
		// records knew; the engine's history is not asked (the exit is
		// not this install's to find, nor has it happened).
		at, _ := m.vanishedExit(ctx, wb.ID, true)
		m.log.Info("reconcile: a run copied from the original install, whose container this copy (started with --new-identity) does not manage; closed in this copy at its last heartbeat in the copied records",
			"id", wb.ID, "ended_at", at)
		m.closeVanished(ctx, wb, at, copiedRunReason())
	default:
		// The container is gone: its exit time is in the engine's event
		// history, else metering ends at the last heartbeat.
		at, source := m.vanishedExit(ctx, wb.ID, false)
		m.log.Info("reconcile: container gone", "id", wb.ID, "ended_at", at, "from", source)
		m.closeVanished(ctx, wb, at, reasonf("the container disappeared"))
	}
}

// recordedUnrecordedStop is recordUnrecordedStop for reconciliation: true
// when wb had a stop to record, recorded or not (a failure is logged; the
// next pass tries again, and nothing else is decided on it meanwhile).
func (m *Manager) recordedUnrecordedStop(ctx context.Context, wb *models.Workbench, c runtime.ContainerInfo, found bool) bool {
	had, err := m.recordUnrecordedStop(ctx, wb, c, found)
	if err != nil {
		m.log.Warn("reconcile: recording a stop made while the database could not be written", "id", wb.ID, "err", err)
	}
	return had
}

// splitRestartedRun ends the metered run of a running workbench whose
// container was started again behind the portal's back (`docker restart`,
// or `docker stop` and `docker start` while the portal was down): the run
// it metered ended at the container's previous exit, and the caller opens
// a new one at its new start, so the time it was down is not billed.
func (m *Manager) splitRestartedRun(ctx context.Context, id string, c runtime.ContainerInfo) {
	iv, err := m.store.OpenIntervalOf(ctx, id)
	if err != nil || c.StartedAt.IsZero() || !c.StartedAt.After(iv.StartedAt.Add(time.Second)) {
		return
	}
	ended := c.FinishedAt // the engine keeps the last exit while the container runs again
	if ended.Before(iv.StartedAt) || ended.After(c.StartedAt) {
		ended = c.StartedAt
	}
	if m.startedAfterBackup(ctx, iv, c) {
		// This database was restored from a backup that knew this run up
		// to its taking: the portal itself may well have stopped and
		// started the workbench since (its records of that went with the
		// restore), and "outside the portal" was a false alarm.
		m.log.Info("reconcile: container started again after the backup this database was restored from (by the portal before the restore, or outside it)",
			"id", id, "exited", ended, "started", c.StartedAt)
	} else {
		m.log.Info("reconcile: container restarted outside the portal", "id", id, "exited", ended, "started", c.StartedAt)
	}
	_ = m.closeInterval(ctx, id, ended, models.EndRestartedOutside)
}

// startedAfterBackup reports whether container c of a run this database
// last saw alive (iv's heartbeat) no later than the taking of the backup
// it was restored from was started after that backup.
func (m *Manager) startedAfterBackup(ctx context.Context, iv *models.UsageInterval, c runtime.ContainerInfo) bool {
	taken, err := m.store.BackupTakenAt(ctx)
	if err != nil {
		m.log.Warn("reconcile: read when the backup was taken", "err", err)
		return false
	}
	return !taken.IsZero() && !iv.HeartbeatAt.After(taken) && c.StartedAt.After(taken)
}

// exitedThisRun reports whether the container of a launching workbench
// ran and exited in this launch. A container that a start reuses still
// carries its last run's exit until the engine starts it again: that exit
// is older than the workbench's last stop, and the start is taken up
// (it was failed as "Jupyter exited while starting", with the last run's
// logs).
func exitedThisRun(wb *models.Workbench, c runtime.ContainerInfo) bool {
	if c.FinishedAt.IsZero() {
		return false
	}
	return wb.StoppedAt == nil || c.StartedAt.After(*wb.StoppedAt)
}

// copiedRun reports whether wb's run is one a copy of an install started
// with --new-identity holds of the original: it started before the new
// identity. Its container is the original's, alive and well, and "the
// container disappeared" would alarm its owner for nothing.
func (m *Manager) copiedRun(ctx context.Context, wb *models.Workbench) bool {
	copied, err := m.store.NewIdentityAt(ctx)
	if err != nil {
		m.log.Warn("reconcile: read when the install id changed", "err", err)
	}
	return !copied.IsZero() && wb.StartedAt != nil && wb.StartedAt.Before(copied)
}

// copiedRunReason is why a copy closed a run of the original's.
func copiedRunReason() string {
	return reasonf("this copy of the install does not manage the original's containers (started with --new-identity)")
}

// closeVanished marks a workbench stopped whose container is gone or dead,
// at Docker's exit time when known.
func (m *Manager) closeVanished(ctx context.Context, wb *models.Workbench, at time.Time, reason string) {
	if at.IsZero() {
		at = time.Now().UTC()
	}
	if err := m.closeInterval(ctx, wb.ID, at, reason); err != nil {
		return // the next reconciliation tries again
	}
	if err := m.store.ReleaseGPUs(ctx, wb.ID); err != nil {
		m.log.Error("release GPUs", "id", wb.ID, "err", err)
		return
	}
	m.log.Info("reconcile: closing", "id", wb.ID, "reason", reason, "at", at)
	// Only from the state this reconciliation saw: a stop that finished
	// meanwhile keeps its own reason.
	_ = m.transition(ctx, wb.ID, models.Transition{From: []string{wb.State}, To: models.StateStopped, Reason: reason,
		Set: models.WorkbenchFields{Endpoint: new(""), StoppedAt: &at, ClearPreempt: true}})
	m.kickDrain()
}

// reconcileStray handles a labelled container whose workbench is not
// active. orphan: it is an orphan left in place (within its grace, or its
// removal failed), whose GPUs stay taken.
func (m *Manager) reconcileStray(ctx context.Context, id string, c runtime.ContainerInfo) (orphan bool) {
	exists, deleted, err := m.store.WorkbenchExists(ctx, id)
	if err != nil {
		return true // decide nothing: what it held stays held
	}
	if exists && !deleted {
		// A stopped or failed workbench's container: it should not run.
		if c.Running {
			m.log.Warn("reconcile: stopping container of an inactive workbench", "id", id)
			_ = m.rt.Stop(ctx, c.ID, m.opt.StopGrace)
		}
		return false
	}
	// On the manager's clock, as the grace shown on the pool pages.
	if m.now().Sub(c.Created) < m.opt.OrphanGrace {
		return true // may be a launch whose record is being written by another process
	}
	m.log.Warn("reconcile: removing orphan container", "container", c.Name, "workbench", id)
	if err := m.rt.Remove(ctx, c.ID); err != nil && !errors.Is(err, runtime.ErrNotFound) {
		m.log.Warn("remove orphan", "container", c.Name, "err", err)
		return true
	}
	return false
}

// relaunch takes up a launch a previous process accepted but did not get
// as far as starting its container: back to requested, then the pipeline
// (a container it had created is started if it fits, as a restart does).
// It reports false when the launch cannot be taken up (its image or
// flavor is gone, the state moved on): the caller fails it.
func (m *Manager) relaunch(ctx context.Context, wb *models.Workbench, owner *models.User, c runtime.ContainerInfo, found bool) bool {
	img, err := m.store.ImageByID(ctx, wb.ImageID)
	if err != nil {
		return false
	}
	fl, err := m.store.FlavorByID(ctx, wb.ShapeFlavorID())
	if err != nil {
		return false
	}
	wb.ContainerID = ""
	if found {
		wb.ContainerID = c.ID
	}
	if err := m.transition(ctx, wb.ID, models.Transition{From: []string{wb.State}, To: models.StateRequested, Progress: 0,
		Set: models.WorkbenchFields{ContainerID: new(wb.ContainerID)}}); err != nil {
		return false
	}
	m.log.Info("reconcile: resuming interrupted launch from the start", "id", wb.ID, "was", wb.State)
	wb.State = models.StateRequested
	m.inBackground(wb.ID, func(ctx context.Context) error {
		return m.restart(withHomeMayBeUnprepared(ctx), wb, owner.HomeName(), img, fl, wb.Units)
	})
	return true
}
