package orchestrator

import (
	"context"
	"slices"

	"workbench/models"
	"workbench/orchestrator/scheduler"
)

// A launch that asks not to wait (no queue) takes free units only; but free
// units may be what earlier or higher-priority requests in the queue wait
// for (a 2-GPU request waiting with 1 free, a spot run told to yield for
// it). Taking them directly jumped the queue and made that preemption
// useless. So while anyone waits, such a launch is decided by the queue's
// own rules — priority, fair share, arrival, backfill — as if it had
// arrived now: placed at once if the queue would place it, else refused
// with the queue's reason and nothing left behind.

// directOutcome is what a drain decided of a launch that will not wait.
type directOutcome struct {
	placed bool
	units  []models.Unit
	// refusal is why it could not start now (a RefusedError or a quota
	// error), when not placed.
	refusal error
}

// launchWithoutWaiting puts wb in the queue for one drain that places it
// only if its turn is now. check is the launch quota; limits that a queued
// launch would wait for refuse it here.
func (m *Manager) launchWithoutWaiting(ctx context.Context, wb *models.Workbench, check func(*models.Tx) error) (*models.Workbench, error) {
	strict := func(tx *models.Tx) error { return models.FinalQuota(check(tx)) }
	// No other drain sees it queued (it would tell a spot run to yield for
	// it, or explain its wait): it is in the queue for this drain only.
	m.drainMu.Lock()
	defer m.drainMu.Unlock()
	if err := m.store.EnqueueWorkbench(ctx, wb, strict); err != nil {
		return nil, m.refusal(ctx, err)
	}
	var out directOutcome
	if err := m.drainLocked(ctx, wb.ID, &out); err != nil {
		// The drain rolled back: take the request out again, or the next
		// drain would place a launch its owner was told had failed.
		if werr := m.store.DrainQueue(ctx, func(q *models.QueueTx) error { return q.Withdraw(wb.ID) }); werr != nil {
			m.log.Warn("withdraw a launch whose drain failed", "id", wb.ID, "err", werr)
		}
		return nil, err
	}
	if !out.placed {
		return nil, m.refusal(ctx, out.refusal)
	}
	m.log.Info("launch", "id", wb.ID, "owner_id", wb.OwnerID, "units", len(out.units), "decided_by", "queue")
	fresh, err := m.store.WorkbenchByID(ctx, wb.ID)
	if err != nil {
		return nil, err
	}
	return fresh, nil
}

// decideDirect is the drain's decision for launched, a launch that will
// not wait: placed if the plan starts it now, withdrawn otherwise. Nothing
// else is decided in this drain (the next, kicked at once, does that): a
// request the plan starts before it still finds its units, since the plan
// gave them out in order.
func decideDirect(q *models.QueueTx, snap scheduler.Snapshot, asks map[string]queuedAsk, launched string,
	months map[int64]models.MonthUsage, out *directOutcome) error {
	a, ok := asks[launched]
	switch {
	case !ok:
		out.refusal = &RefusedError{Code: "no_capacity", Message: reasonf("it could not be placed now; launch with queue to wait for its turn")}
		return q.Withdraw(launched)
	case a.beyond != nil:
		out.refusal = a.beyond
		return q.Withdraw(launched)
	}
	plan := scheduler.Decide(snap)
	if !slices.Contains(plan.Start, launched) {
		why := reasonf("its turn has not come")
		if w, ok := plan.Waiting[launched]; ok {
			why = waitText(w)
		}
		out.refusal = &RefusedError{Code: "no_capacity", Message: reasonf("not started: %s (others wait in the queue for these GPUs); launch with queue to wait for your turn", why)}
		return q.Withdraw(launched)
	}
	if err := q.Check(models.CheckLaunchQuota(a.ask, months[a.ask.UserID])); err != nil {
		out.refusal = models.FinalQuota(err)
		return q.Withdraw(launched)
	}
	units, err := q.Place(launched, a.need, true)
	if err != nil {
		return err
	}
	out.placed, out.units = true, units
	return nil
}
