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
	own, err := h.store.FlavorByID(ctx, wb.FlavorID)
	if err != nil {
		return nil, err
	}
	demand, err := orchestrator.LoadQueuedDemand(ctx, h.store)
	if err != nil {
		return nil, err
	}
	var out []templates.FreeFlavor
	for i, f := range fls {
		// A CPU-only flavor is always "free": not what a GPU launch waits
		// for. The units this one waits for are not offered beside it.
		if f.GPUCount == 0 || unitPoolOf(f) == unitPoolOf(*own) {
			continue
		}
		// What the queue owes others is not free to a new launch: queued
		// launches of the class it would take and above wait for it first,
		// a lower class's only where it starts now. Any queued launch of
		// the kind left it out, so the owner's own preemptible 4-GPU run
		// waiting with 3 free hid the 1-GPU flavor an interactive launch
		// would start on at once (it goes ahead of the lower class).
		free, _ := lessBooked(freeUnitsFor(gpus, f), held[unitPoolOf(f)])
		if free < f.GPUCount {
			continue // too few free before the queue's due: no class to look up
		}
		cls, err := h.store.LaunchDefaultClass(ctx, u.ID, f.ID)
		if err != nil {
			return nil, err
		}
		free = max(demand.FreeFor(unitPoolOf(f), cls.Rank, free), 0)
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
