package orchestrator

import (
	"context"
	"time"

	"workbench/models"
)

// Preemption (issue 12 §3; docs/scheduling.md). When a drain finds a
// higher-priority request that cannot be placed, the scheduler picks
// preemptible victims; each is told to yield (MarkPreempt records when its
// grace ends, notifyPreempt writes the notice file), keeps running through
// the grace so its code can checkpoint, and is then stopped by the drain
// that finds its time due (preemptDue) — a timer in the database, so a
// portal restart does not lose it. It ends "preempted", home kept, billed
// to its container's exit; with auto-resume it re-enters the queue.

// PreemptFile is workbench id's notice, relative to the home: it holds the
// time (RFC 3339, UTC) at which the workbench will be stopped, and is
// empty while it may run on. One file per workbench: a user's workbenches
// share one home, and a notice to one must not tell the others to yield.
func PreemptFile(id string) string { return ".workbench/preempt-at-" + id }

// PreemptFileEnv names the notice file's full path in every workbench.
const PreemptFileEnv = "WORKBENCH_PREEMPT_FILE"

// notifyPreempt tells a victim it must yield by at: the notice file in its
// home and a reason on its page.
func (m *Manager) notifyPreempt(ctx context.Context, id string, at time.Time) {
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err != nil {
		return
	}
	m.log.Info("preempting", "id", id, "at", at, "for", wb.PreemptFor)
	msg := reasonf("Workbench %s must yield its GPUs to higher-priority work: it stops at %s UTC. Save a checkpoint now; its home is kept.",
		wb.Name, at.UTC().Format("2006-01-02 15:04:05"))
	if wb.PreemptFor != "" {
		// The launch last: mail and webhook readers know the message by
		// its start.
		msg = reasonf("Workbench %s must yield its GPUs to higher-priority work: it stops at %s UTC. Save a checkpoint now; its home is kept. It yields to a launch (%s).",
			wb.Name, at.UTC().Format("2006-01-02 15:04:05"), wb.PreemptFor)
	}
	m.tellOwner(ctx, wb, EventPreempt, msg)
	m.postPreemptNotice(ctx, wb, at)
}

// postPreemptNotice gives wb's page its preemption reason and, once it
// runs, writes the notice file with at. A run told while still launching
// gets its file when it becomes ready (repostPreemptNotice): becameReady
// empties the last run's notice and sets the run's reason, so posting
// only here left the file empty and the reason blank for the whole grace.
func (m *Manager) postPreemptNotice(ctx context.Context, wb *models.Workbench, at time.Time) {
	msg := reasonf("preemptible: a higher-priority launch needs these GPUs; this workbench stops at %s UTC (save a checkpoint; notice in ~/%s)",
		at.UTC().Format("15:04:05"), PreemptFile(wb.ID))
	if wb.PreemptFor != "" {
		msg = reasonf("preemptible: a higher-priority launch needs these GPUs (%s); this workbench stops at %s UTC (save a checkpoint; notice in ~/%s)",
			wb.PreemptFor, at.UTC().Format("15:04:05"), PreemptFile(wb.ID))
	}
	m.updateWorkbench(ctx, wb.ID, map[string]any{"reason": msg})
	m.events.Publish(Update{ID: wb.ID, State: wb.State, Reason: msg, Yielding: new(true), At: time.Now().UTC()})
	if wb.ContainerID == "" || wb.State != models.StateRunning {
		return // still launching: becameReady posts it again
	}
	img, err := m.store.ImageByID(ctx, wb.ImageID)
	if err != nil {
		return
	}
	if err := m.rt.WriteHomeFile(ctx, wb.ContainerID, img.HomePath, img.ContainerUser(), PreemptFile(wb.ID),
		[]byte(at.UTC().Format(time.RFC3339)+"\n")); err != nil {
		m.log.Warn("preemption notice", "id", wb.ID, "err", err)
	}
}

// repostPreemptNotice posts again, once id runs, the notice of a
// preemption it was told of while launching (its preempt_at is set).
func (m *Manager) repostPreemptNotice(ctx context.Context, id string) {
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err != nil || wb.PreemptAt == nil || wb.State != models.StateRunning {
		return
	}
	m.postPreemptNotice(ctx, wb, *wb.PreemptAt)
}

// notifySpared tells a run whose preemption was rescinded (nobody needs
// its GPUs any more) that it runs on: the notice file emptied, the page
// updated, its owner told.
func (m *Manager) notifySpared(ctx context.Context, id string) {
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err != nil {
		return
	}
	m.log.Info("preemption rescinded", "id", id)
	m.events.Publish(Update{ID: id, State: wb.State, Yielding: new(false), At: time.Now().UTC()})
	if wb.ContainerID != "" && wb.State == models.StateRunning {
		m.clearPreemptNotice(ctx, id, wb.ContainerID)
	}
	m.tellOwner(ctx, wb, EventSpared, reasonf("Workbench %s no longer has to yield its GPUs: the launch that needed them got others or left the queue. It runs on.", wb.Name))
}

// clearPreemptNotice empties the notice of a preemptible workbench that
// starts (again): a resumed run must not read the last run's notice. The
// file stays, empty, so watchers need not handle its absence.
func (m *Manager) clearPreemptNotice(ctx context.Context, id, cid string) {
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err != nil || !wb.Preemptible {
		return
	}
	img, err := m.store.ImageByID(ctx, wb.ImageID)
	if err != nil {
		return
	}
	if err := m.rt.WriteHomeFile(ctx, cid, img.HomePath, img.ContainerUser(), PreemptFile(id), nil); err != nil {
		m.log.Warn("clear preemption notice", "id", id, "err", err)
	}
}

// preemptDue stops the victims whose grace has ended.
func (m *Manager) preemptDue(ctx context.Context) {
	due, err := m.store.DuePreemptions(ctx, m.now())
	if err != nil {
		m.log.Warn("preemption: list due", "err", err)
		return
	}
	for _, wb := range due {
		if err := m.preempt(ctx, wb.ID); err != nil {
			m.log.Warn("preemption: stop", "id", wb.ID, "err", err)
		}
	}
}

// preempt stops a victim as "preempted" and, with auto-resume, puts it
// back in the queue in the same transaction: it is never seen stopped
// between the two (the queue would not place it, a page would offer Start).
func (m *Manager) preempt(ctx context.Context, id string) error {
	wb, err := m.waitClaim(ctx, id)
	if err != nil || wb == nil {
		return err
	}
	defer m.release(id)
	if wb.State == models.StateStopping && !finishingPreemption(wb) {
		// A stop of its own is under way (its owner's during the notice,
		// left by a process that died): it stays a stop, finished by
		// reconciliation, not turned into a preemption by the queue.
		return nil
	}
	return m.preemptClaimed(ctx, wb)
}

// preemptReason is the reason a preempted workbench shows, with what the
// launch it yielded to asked for (forText, Workbench.PreemptFor; "" for a
// notice given before it was recorded); a stop under way with it is a
// preemption (see finishingPreemption). Words for people: pages read what
// the launch asked for from Workbench.PreemptedFor, never out of this.
func preemptReason(autoResume bool, forText string) string {
	switch {
	case forText != "" && autoResume:
		return reasonf("preempted: a higher-priority launch needed its GPUs (%s; its home is kept; it resumes when GPUs free up)", forText)
	case forText != "":
		return reasonf("preempted: a higher-priority launch needed its GPUs (%s; its home is kept; start it again when you like)", forText)
	case autoResume:
		return reasonf("preempted: a higher-priority launch needed its GPUs (its home is kept; it resumes when GPUs free up)")
	}
	return reasonf("preempted: a higher-priority launch needed its GPUs (its home is kept; start it again when you like)")
}

// finishingPreemption reports whether a workbench left stopping (by a
// portal killed half-way) was being preempted, not stopped by its owner
// during the notice: reconciliation then finishes it as a preemption —
// preempted, and back in the queue with auto-resume.
func finishingPreemption(wb *models.Workbench) bool {
	return wb.State == models.StateStopping && wb.PreemptAt != nil &&
		(wb.Reason == preemptReason(wb.AutoResume, wb.PreemptFor) || wb.Reason == preemptReason(wb.AutoResume, ""))
}

// preemptClaimed is preempt with the claim on wb held.
func (m *Manager) preemptClaimed(ctx context.Context, wb *models.Workbench) error {
	reason := preemptReason(wb.AutoResume, wb.PreemptFor)
	var then *models.Requeue
	if wb.AutoResume {
		exp := m.now().Add(m.opt.QueueMaxWait)
		then = &models.Requeue{Message: reasonf("preempted; waiting to resume"), Expires: &exp, Resume: true}
	}
	did, err := m.stopClaimedAs(ctx, wb, reason, false, models.StatePreempted, then)
	if err != nil || !did { // its owner (or an admin) stopped it first: not preempted
		return err
	}
	if m.metrics != nil {
		m.metrics.queue.preempted()
	}
	m.tellOwner(ctx, wb, EventPreempted, reasonf("Workbench %s: %s", wb.Name, reason))
	return nil
}
