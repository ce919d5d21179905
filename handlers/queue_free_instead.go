package handlers

import (
	"context"
	"net/url"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/templates"
)

// freeInstead lists, for a workbench of u that waits in the queue, the
// other GPU flavors u could launch now and that would start at once on
// what is free: a student queued for a MIG slice while whole GPUs sit idle
// (or the other way round) was only told to wait. Each links to the launch
// form with the same image and that flavor; the queued workbench keeps its
// place. It uses the launch form's own rules (quota, server, bookings held
// for others, free units), so what it offers the form does not refuse.
func (h *Handler) freeInstead(ctx context.Context, u *models.User, wb *models.Workbench, image string) ([]templates.FreeFlavor, error) {
	// A workbench held back by its owner's own quota or booking would be
	// held back the same under another flavor.
	if wb.State != models.StateQueued || wb.OwnerID != u.ID || orchestrator.WaitsOnOwnerAlone(wb.QueueReason) {
		return nil, nil
	}
	lim, err := h.store.EffectiveQuota(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	fls, err := h.store.ListFlavors(ctx, true)
	if err != nil {
		return nil, err
	}
	gpus, err := h.pool.List(ctx)
	if err != nil {
		return nil, err
	}
	held, err := h.heldForOthers(ctx, u)
	if err != nil {
		return nil, err
	}
	needs, err := h.pool.Needs(ctx, fls)
	if err != nil {
		return nil, err
	}
	contested, err := h.contestedPools(ctx, wb, fls)
	if err != nil {
		return nil, err
	}
	var out []templates.FreeFlavor
	for i, f := range fls {
		// A CPU-only flavor is always "free": not what a GPU launch waits
		// for. Units others (or this one) wait for are the queue's to hand
		// out: a launch for them may wait its turn, so they are not offered.
		if f.GPUCount == 0 || contested[unitPoolOf(f)] {
			continue
		}
		free, _ := lessBooked(freeUnitsFor(gpus, f), held[unitPoolOf(f)])
		if why, waits := h.launchRule(ctx, lim, &fls[i], gpus, needs[f.ID], free); why != "" || waits != "" {
			continue
		}
		q := url.Values{"flavor": {f.Name}}
		if image != "" {
			q.Set("image", image)
		}
		ff := templates.FreeFlavor{Name: f.Name, Units: unitTextT(ctx, f), Free: free, FreeNoun: freeNoun(f), LaunchURL: "/workbenches/new?" + q.Encode()}
		if rate, err := h.wbs.Billing().HourlyRate(ctx, orchestrator.FlavorShape(&fls[i])); err == nil {
			ff.PerHour = rateTextIn(ctx, rate, h.cfg.Currency)
		}
		out = append(out, ff)
	}
	return out, nil
}

// contestedPools are the kinds of unit that queued workbenches wait for
// (wb among them), save those held back only by their owner's quota or
// booking: free units of such a kind are what the queue gives out next,
// in its order, so a new launch for them is not sure to start at once.
func (h *Handler) contestedPools(ctx context.Context, wb *models.Workbench, fls []models.Flavor) (map[models.UnitPool]bool, error) {
	queued, err := h.store.ListWorkbenches(ctx, 0, models.StateQueued)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]models.Flavor, len(fls))
	for _, f := range fls {
		byID[f.ID] = f
	}
	out := map[models.UnitPool]bool{}
	for _, q := range queued {
		if q.ID != wb.ID && orchestrator.WaitsOnOwnerAlone(q.QueueReason) {
			continue
		}
		f, ok := byID[q.FlavorID]
		if !ok { // a disabled flavor: read it
			fl, err := h.store.FlavorByID(ctx, q.FlavorID)
			if err != nil {
				continue
			}
			f = *fl
		}
		if f.GPUCount > 0 {
			out[unitPoolOf(f)] = true
		}
	}
	return out, nil
}
