package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"workbench/models"
	"workbench/orchestrator/runtime"
)

// StateDeleted is the state an event stream's last event gives a
// workbench that was deleted (no workbench row holds it).
const StateDeleted = "deleted"

// ErrState is a request that does not fit the workbench's state (409).
type ErrState struct{ Message string }

func (e *ErrState) Error() string { return e.Message }

// StartRefusal is Start's answer for a workbench in a state it cannot be
// started from: what to do instead.
func StartRefusal(state string) *ErrState {
	return &ErrState{Message: reasonf("the workbench is %s; %s (only a stopped, failed or preempted workbench can be started)", state, startHint(state))}
}

// startHint is what to do instead of starting a workbench in state.
func startHint(state string) string {
	switch state {
	case models.StateRunning:
		return reasonf("open it")
	case models.StateQueued:
		return reasonf("it starts by itself when GPUs free up")
	case models.StateStopping:
		return reasonf("wait until it has stopped, then start it")
	default:
		return reasonf("it is already on its way; wait for it on its page")
	}
}

// Start starts a stopped (or failed) workbench again. GPUs are allocated
// afresh; the container is recreated when its GPU set changed (device
// requests are fixed at create time) or it is gone.
//
// Like a launch, once accepted it runs to its end whatever happens to ctx.
func (m *Manager) Start(ctx context.Context, id string, owner *models.User) error {
	return m.StartAs(ctx, id, owner, StartOptions{})
}

// StartOptions are how a stopped workbench is started.
type StartOptions struct {
	// CPUOnly starts it as its flavor's CPU-only twin.
	CPUOnly bool
	// Queue puts it in the queue when it cannot start now for want of free
	// units, or of a concurrency limit its owner's other workbenches free
	// when they stop, instead of refusing (a launch's "queue"); the queue
	// starts it, home kept. Waiting is free.
	Queue bool
}

// StartAs is Start in the flavor's shape, or, with opt.CPUOnly, in the shape
// of the flavor's CPU-only twin (same image, same home, no GPU; metered and
// priced as the twin) for setup and data work without holding a GPU. With
// opt.Queue a start that cannot be placed now waits in the queue; so does,
// always, a workbench whose last run was CPU-only started with its GPUs when
// none are free (whole-GPU flavors; see RestartWithGPUs).
func (m *Manager) StartAs(ctx context.Context, id string, owner *models.User, opt StartOptions) error {
	cpuOnly := opt.CPUOnly
	// A stop not recorded yet (the database could not be written) is
	// recorded first: the record says running until then.
	if err := m.settleFirst(ctx, id); err != nil {
		return err
	}
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err != nil {
		return err
	}
	if wb.State != models.StateStopped && wb.State != models.StateFailed && wb.State != models.StatePreempted {
		return StartRefusal(wb.State)
	}
	if err := m.rt.Ping(ctx); err != nil {
		return fmt.Errorf("%w: %v", ErrEngineUnavailable, err)
	}
	img, err := m.store.ImageByID(ctx, wb.ImageID)
	if err != nil {
		return err
	}
	fl, err := m.store.FlavorByID(ctx, wb.FlavorID)
	if err != nil {
		return err
	}
	allowedAs := fl.Name // the quota's allowed-flavors rule is about the flavor chosen at launch
	var runFlavorID int64
	if cpuOnly {
		if fl, err = m.CPUTwin(ctx, fl); err != nil {
			return err
		}
		runFlavorID = fl.ID
	}
	if err := m.exceedsHost(ctx, fl); err != nil {
		return err
	}
	need, err := m.pool.Need(ctx, fl)
	if err != nil {
		return err
	}
	// The state moves to requested and the GPUs are bound in one
	// transaction that only succeeds from stopped or failed, so two Start
	// requests racing cannot both bind GPUs.
	month, err := m.billing.MonthUsage(ctx, wb.OwnerID)
	if err != nil {
		return err
	}
	ask := models.LaunchAsk{UserID: wb.OwnerID, Image: img.Name, Flavor: allowedAs, GPUModel: fl.GPUModel, GPUs: fl.GPUCount, Kind: fl.UnitKind,
		IdleTimeout: time.Duration(wb.IdleTimeoutS) * time.Second, Currency: m.opt.Currency, Start: true}
	// An unpriced shape is left to the billing pass (it stops unpriced runs).
	ask.MinChargeMicros, ask.MinChargeSecs, _ = m.billing.MinimumCharge(ctx, FlavorShape(fl))
	// One pinned to a booking runs on it (as a launch pinned to it).
	if wb.ReservationID == nil {
		if ask.SetAsideMicros, err = m.launchSetAside(ctx, wb.OwnerID, fl); err != nil {
			return err
		}
	}
	// Accepted from here on: what follows must not be cut half-way by the
	// request ending (a record without its launch), so the request's
	// cancellation no longer applies. Until here it only stopped checks.
	ctx = context.WithoutCancel(ctx)
	// A home reset (or a stop finishing) holds the workbench: a start now
	// would run on a home being deleted. Held until the start is
	// registered as a launch, which keeps them off in turn.
	if !m.claim(id, false) {
		return &ErrState{Message: reasonf("the workbench is being stopped, or its home reset, right now; try again in a moment")}
	}
	m.accepting.RLock()
	// Others' active bookings hold their units back from a start as from a
	// launch, checked in the transaction that binds the units.
	units, err := m.store.RestartWorkbench(ctx, id, need, runFlavorID, m.startCheck(wb.OwnerID, need, models.CheckLaunchQuota(ask, month)))
	m.forgetRoute(id)
	if err != nil {
		m.release(id)
		m.accepting.RUnlock()
		if errors.Is(err, models.ErrConflict) {
			return &ErrState{Message: reasonf("the workbench is already being started; its page shows the progress")}
		}
		refused := m.refusal(ctx, err)
		// A workbench that last ran CPU-only and is started with its GPUs
		// ("Start with GPUs") waits in the queue for them when none are
		// free, as "Restart with GPUs" does for a running one.
		if !cpuOnly && wb.CPUOnly() && waitsForGPUs(fl, refused) {
			return m.queueForGPUs(ctx, id, "waiting for GPUs to start with them")
		}
		if opt.Queue && !cpuOnly && waitsInQueue(err, refused) {
			return m.queueForGPUs(ctx, id, reasonf("waiting in the queue to start again"))
		}
		return refused
	}
	defer m.accepting.RUnlock()
	m.events.Publish(Update{ID: id, State: models.StateRequested, At: time.Now().UTC()})
	m.inBackground(id, func(ctx context.Context) error {
		return m.restart(ctx, wb, owner.HomeName(), img, fl, units)
	})
	m.release(id)
	return nil
}

func (m *Manager) restart(ctx context.Context, wb *models.Workbench, owner string, img *models.Image, fl *models.Flavor, units []models.Unit) error {
	if wb.ContainerID != "" {
		info, err := m.rt.Inspect(ctx, wb.ContainerID)
		// Reused only in the same shape: the GPU set and the CPU/memory
		// limits (another flavor, e.g. the CPU-only twin) are fixed at create.
		reuse := err == nil && info.Labels[labelGPUs] == joinGPUs(models.DeviceIDs(units)) && info.Labels[labelFlavor] == strconv.FormatInt(fl.ID, 10) && info.Image == img.Image
		if reuse {
			// Its network may have been removed since it stopped (by
			// hand): made again and the container put back on it, else
			// the engine refuses the start with a raw "network … not
			// found". If that cannot be done, a new container is made,
			// as for another shape.
			if err := m.reattach(ctx, wb.ContainerID, owner); err != nil && !errors.Is(err, errors.ErrUnsupported) {
				m.log.Warn("start: could not put the container back on the portal's network; making a new one", "id", wb.ID, "err", err)
				reuse = false
			}
		}
		if reuse {
			if err := m.transition(ctx, wb.ID, models.Transition{From: []string{models.StateRequested}, To: models.StateStarting, Progress: 85}); err != nil {
				return err
			}
			if homeMayBeUnprepared(ctx) && info.StartedAt.IsZero() {
				if err := m.prepareHome(ctx, wb.ContainerID, img); err != nil {
					return err
				}
			}
			if err := m.egressBeforeStart(ctx); err != nil {
				return err
			}
			if err := m.startContainer(ctx, wb.ContainerID); err != nil {
				return errors.New(reasonf("could not start the container: %v", err))
			}
			return m.waitReady(ctx, wb.ID, wb.ContainerID, owner, wb.Token)
		}
		m.keepExitLogs(ctx, wb.ID, wb.ContainerID)
		_ = m.rt.Remove(ctx, wb.ContainerID)
	}
	return m.runPipeline(ctx, wb.ID, owner, img, fl, units, wb.Token)
}

// Delete removes a workbench's container and record. The user's home volume
// is kept unless deleteData is set, and then only when no other workbench of
// the user still uses it.
//
// The deletion runs to its end in the manager whatever happens to ctx (see
// detached), and it is written down before it starts: a portal killed
// half-way finishes it on its next reconciliation (finishPendingDeletes).
func (m *Manager) Delete(ctx context.Context, id string, owner *models.User, deleteData bool) error {
	return m.detached(ctx, func(ctx context.Context) error { return m.delete(ctx, id, owner, deleteData) })
}

func (m *Manager) delete(ctx context.Context, id string, owner *models.User, deleteData bool) error {
	if err := m.settleFirst(ctx, id); err != nil {
		return err // the stop's record first (its run closes at the stop)
	}
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err != nil {
		return err
	}
	// Hold the claim so neither reconciliation nor a stop acts on it
	// meanwhile; a launch in progress refuses the deletion.
	for !m.claim(id, false) {
		if m.isLaunching(id) {
			return &ErrState{Message: reasonf("the workbench is still launching; stop it first or wait")}
		}
		time.Sleep(20 * time.Millisecond)
	}
	defer m.release(id)
	// A stop may have finished while this waited: decide on a fresh record.
	if wb, err = m.store.WorkbenchByID(ctx, id); err != nil {
		return err
	}
	if deleteData {
		n, err := m.store.CountWorkbenches(ctx, wb.OwnerID)
		if err != nil {
			return err
		}
		if n > 1 {
			return &ErrState{Message: reasonf("your home volume is shared by your other workbenches; delete them first to delete your data")}
		}
	}
	if err := m.store.RequestWorkbenchDelete(ctx, id, deleteData); err != nil {
		return err
	}
	if err := m.finishDelete(ctx, wb, owner.HomeName(), deleteData); err != nil {
		// The owner is told it failed and decides again (a retry, or a
		// start): only a delete whose requester is gone with the process
		// is left for reconciliation to finish.
		if err := m.store.WorkbenchDeleteDone(ctx, id); err != nil {
			m.log.Warn("delete: cross off", "id", id, "err", err)
		}
		return err
	}
	return nil
}

// finishDelete does the work of a delete asked for, the claim on wb held:
// the container ends, the record and its metering end at the container's
// exit, and the home volume goes when asked for.
func (m *Manager) finishDelete(ctx context.Context, wb *models.Workbench, homeName string, deleteData bool) error {
	var exited time.Time
	if wb.ContainerID != "" {
		exited = m.killForDelete(ctx, wb.ContainerID)
		if err := m.rt.Remove(ctx, wb.ContainerID); err != nil {
			return fmt.Errorf("remove container: %w", err)
		}
	}
	defer m.forgetRoute(wb.ID)
	// The record and its metering end together, at the container's exit:
	// the engine's die event may come before or after, or never.
	if err := m.store.MarkWorkbenchDeleted(ctx, wb.ID, exited); err != nil {
		return err
	}
	if _, err := m.billing.BillOnce(ctx); err != nil {
		m.moneyError(ctx, moneyErrBilling, wb.ID, err, false)
	}
	m.BudgetsChanged()
	if deleteData {
		if err := m.deleteHome(ctx, wb.ID, wb.OwnerID, homeName); err != nil {
			return fmt.Errorf("the workbench is deleted, but its home volume could not be: %w", err)
		}
	}
	m.events.Publish(Update{ID: wb.ID, State: StateDeleted, At: time.Now().UTC()})
	m.kickDrain() // what it held is free, and the queue's positions moved
	m.log.Info("workbench deleted", "id", wb.ID, "delete_data", deleteData)
	return nil
}

// deleteHome removes the owner's home volume for the delete of workbench
// id, its record already marked, and crosses the delete off. A workbench the
// owner made since (a delete finished after a restart) uses the home: it is
// kept then.
func (m *Manager) deleteHome(ctx context.Context, id string, ownerID int64, homeName string) error {
	n, err := m.store.CountWorkbenches(ctx, ownerID)
	if err != nil {
		return err
	}
	if n > 0 {
		m.log.Warn("delete: home volume kept, another workbench of the owner uses it", "id", id, "owner", homeName)
	} else {
		done := m.homeRemovalBegins(m.homeVolume(homeName))
		defer done()
		if err := m.rt.RemoveVolume(ctx, m.homeVolume(homeName)); err != nil {
			return err
		}
		m.homeRemoved(ctx, ownerID, m.homeVolume(homeName))
	}
	return m.store.WorkbenchDeleteDone(ctx, id)
}

// finishPendingDeletes finishes the deletes that were asked for and cut
// short by the portal's end (kill -9, a crash, a lost engine): their owners
// were not told they failed, so they are carried out. One being done in
// this process holds its claim and is skipped.
func (m *Manager) finishPendingDeletes(ctx context.Context) {
	pending, err := m.store.PendingDeletes(ctx)
	if err != nil {
		m.log.Warn("reconcile: pending deletes", "err", err)
		return
	}
	for _, p := range pending {
		if err := m.finishPendingDelete(ctx, p); err != nil {
			m.log.Warn("reconcile: finishing an interrupted delete", "id", p.ID, "err", err)
		}
	}
}

func (m *Manager) finishPendingDelete(ctx context.Context, p models.PendingDelete) error {
	if !m.claim(p.ID, false) {
		return nil
	}
	defer m.release(p.ID)
	owner, err := m.store.UserByID(ctx, p.OwnerID)
	if err != nil {
		return err
	}
	m.log.Info("reconcile: finishing an interrupted delete", "id", p.ID, "delete_data", p.DeleteData, "record_deleted", p.Deleted)
	if p.Deleted {
		return m.deleteHome(ctx, p.ID, p.OwnerID, owner.HomeName())
	}
	wb, err := m.store.WorkbenchByID(ctx, p.ID)
	if err != nil {
		return err
	}
	return m.finishDelete(ctx, wb, owner.HomeName(), p.DeleteData)
}

// killForDelete ends a container about to be removed and returns its exit
// time as the engine recorded it (zero when unknown), so the deleted
// workbench is charged to the engine's own timestamp.
func (m *Manager) killForDelete(ctx context.Context, cid string) time.Time {
	info, err := m.rt.Inspect(ctx, cid)
	if err != nil {
		return time.Time{}
	}
	if info.Running {
		if err := m.rt.Stop(ctx, cid, 0); err != nil {
			return time.Time{}
		}
		if info, err = m.rt.Inspect(ctx, cid); err != nil || info.Running {
			return time.Time{}
		}
	}
	return info.FinishedAt
}

// Logs returns the last lines of a workbench's output: its container's,
// or once the container is gone (a failed launch removes it; so can an
// administrator) the last lines kept when it ended (keepExitLogs). The
// API answered an empty body while the page showed the kept ones.
func (m *Manager) Logs(ctx context.Context, id string, tail int, follow bool) (io.ReadCloser, error) {
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err != nil {
		return nil, err
	}
	rc, err := m.containerLogs(ctx, wb, tail, follow)
	if !errors.Is(err, runtime.ErrNotFound) {
		return rc, err
	}
	return io.NopCloser(strings.NewReader(lastLines(wb.ExitLogs, tail))), nil
}

// ContainerLogs is Logs of the container alone: empty once it is gone.
// The workbench page shows the kept lines apart, saying what they are.
func (m *Manager) ContainerLogs(ctx context.Context, id string, tail int) (io.ReadCloser, error) {
	wb, err := m.store.WorkbenchByID(ctx, id)
	if err != nil {
		return nil, err
	}
	rc, err := m.containerLogs(ctx, wb, tail, false)
	if errors.Is(err, runtime.ErrNotFound) {
		return io.NopCloser(strings.NewReader("")), nil
	}
	return rc, err
}

// containerLogs reads wb's container's output; runtime.ErrNotFound when
// it has none.
func (m *Manager) containerLogs(ctx context.Context, wb *models.Workbench, tail int, follow bool) (io.ReadCloser, error) {
	if wb.ContainerID == "" {
		return nil, runtime.ErrNotFound
	}
	return m.rt.Logs(ctx, wb.ContainerID, tail, follow)
}

// lastLines is the last n lines of s, each ending in a newline ("" for
// none).
func lastLines(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n") + "\n"
}

// logTail is lastOutput as a suffix, "; last output: …" ("" when none).
func (m *Manager) logTail(ctx context.Context, cid string) string {
	if s := m.lastOutput(ctx, cid); s != "" {
		return "; last output: " + s
	}
	return ""
}

// lastOutput is the container's last lines of output ("" when none or
// unreadable), for failure reasons: users see why Jupyter died.
func (m *Manager) lastOutput(ctx context.Context, cid string) string {
	rc, err := m.rt.Logs(ctx, cid, 5, false)
	if err != nil {
		return ""
	}
	defer rc.Close()
	b, _ := io.ReadAll(io.LimitReader(rc, 2000))
	return strings.TrimSpace(string(b))
}
