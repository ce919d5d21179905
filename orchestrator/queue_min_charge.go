package orchestrator

import (
	"context"

	"workbench/models"
)

// minCharge is what a run costs at least (the minimum charge at the rates in
// force) and how many seconds that is.
type minCharge struct {
	micros, seconds int64
}

// queuedMinCharges prices the minimum charge of each queued workbench, for
// the budget check at its placement, as a launch or a start checks it: the
// queue placed a run for someone with less budget left than its minimum
// charge, who was then charged past the budget. Read outside the drain's
// transaction (it needs the price list), like the month's usage; keyed by
// workbench id. A flavor made after fls was read is priced next drain.
func (m *Manager) queuedMinCharges(ctx context.Context, queued []models.Workbench, fls []models.Flavor) map[string]minCharge {
	type shapeKey struct {
		flavor      int64
		preemptible bool
	}
	byShape := map[shapeKey]minCharge{}
	out := make(map[string]minCharge, len(queued))
	for _, wb := range queued {
		k := shapeKey{wb.FlavorID, wb.Preemptible}
		mc, ok := byShape[k]
		if !ok {
			for i := range fls {
				if fls[i].ID == wb.FlavorID {
					// An unpriced shape is left to the billing pass, as at launch.
					mc.micros, mc.seconds, _ = m.billing.MinimumCharge(ctx, WorkbenchShape(&fls[i], wb.Preemptible))
					break
				}
			}
			byShape[k] = mc
		}
		out[wb.ID] = mc
	}
	return out
}
