package handlers

import (
	"context"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/templates"
)

// flavorUnavailable says why a flavor cannot be launched now ("needs 8
// GPUs, 7 free"), or "" when it can. The text is a reason (models.Reasonf,
// its noun a key of the reasons catalog too): the form prints it in the
// reader's language.
func flavorUnavailable(f models.Flavor, free int) string {
	if f.GPUCount == 0 || free >= f.GPUCount {
		return ""
	}
	gpus := unitNounFor(f, f.GPUCount)
	if free == 0 {
		return models.Reasonf("needs %d %s, none free", f.GPUCount, gpus)
	}
	return models.Reasonf("needs %d %s, %d free", f.GPUCount, gpus, free)
}

// flavorChoice sorts a GPU flavor for the launch form by what the pool
// holds: one asking for more units of its kind than the pool has can never
// start here (unavailable: disabled, "needs 8 GPUs; this server has 7"); one
// the pool holds but whose units are not free now waits in the queue
// (waits); otherwise both are "". ofKind is how many of the flavor's units
// the server has in all (unitsOfKindFor): when some of them cannot be
// handed out (GPUs split into MIG instances or slices, drained, out of
// order), the reason says so — "this server has 7" read as false on an
// 8-GPU server, and "this server has 0" beside 7 MIG instances on a
// drained GPU.
func flavorChoice(f models.Flavor, free, inPool, ofKind int) (unavailable, waits string) {
	if f.GPUCount > inPool {
		parts := f.UnitKind == models.UnitMIG || f.UnitKind == models.UnitSlice
		switch {
		case !parts && ofKind > inPool:
			return models.Reasonf("needs %d %s; %d of this server's %d can be handed out whole (the rest are split into MIG instances or slices, drained or out of order)",
				f.GPUCount, unitNounFor(f, f.GPUCount), inPool, ofKind), ""
		case parts && ofKind > inPool:
			return models.Reasonf("needs %d %s; %d of this server's %d are in service (the rest are on a drained GPU or one out of order)",
				f.GPUCount, unitNounFor(f, f.GPUCount), inPool, ofKind), ""
		}
		return models.Reasonf("needs %d %s; this server has %d", f.GPUCount, unitNounFor(f, f.GPUCount), inPool), ""
	}
	if why := flavorUnavailable(f, free); why != "" {
		return "", models.Reasonf("%s: it waits in the queue for a free GPU", why)
	}
	return "", ""
}

// serverRulesOut says why f can never launch on this server as it is now,
// or "": more CPUs or memory than the host has, or more units of its kind
// than the pool can hand out. The launch form disables such a flavor with
// this note and the catalog shows it beside the flavor's free count, so
// both say the same thing of it.
func (h *Handler) serverRulesOut(ctx context.Context, f *models.Flavor, gpus []orchestrator.PoolGPU) string {
	if why := h.wbs.ExceedsHost(ctx, f); why != "" {
		return why
	}
	never, _ := flavorChoice(*f, 0, poolUnitsFor(gpus, *f), unitsOfKindFor(gpus, *f))
	return never
}

// unitNounFor is a flavor's unit in the number n asks: "GPU", "MIG instances".
func unitNounFor(f models.Flavor, n int) string {
	one, many := unitNoun(f)
	if n == 1 {
		return one
	}
	return many
}

// preselect fills the form's image and flavor when the user has not chosen:
// those of the user's last workbench where they can still be launched,
// else the first image and the cheapest flavor that fits now.
func (h *Handler) preselect(ctx context.Context, userID int64, v *templates.LaunchView, imgs []models.Image, fls []models.Flavor, rates map[string]int64) {
	var lastImage, lastFlavor string
	if wbs, err := h.store.ListWorkbenches(ctx, userID); err == nil && len(wbs) > 0 { // newest first
		for _, img := range imgs {
			if img.ID == wbs[0].ImageID {
				lastImage = img.Name
			}
		}
		for _, f := range fls {
			if f.ID == wbs[0].FlavorID {
				lastFlavor = f.Name
			}
		}
	}
	if v.Image == "" {
		v.Image = lastImage
		if v.Image == "" && len(imgs) > 0 {
			v.Image = imgs[0].Name
		}
	}
	if v.Flavor != "" && v.Unavailable[v.Flavor] == "" {
		return
	}
	v.Flavor = ""
	if lastFlavor != "" && v.Unavailable[lastFlavor] == "" && v.Waits[lastFlavor] == "" {
		v.Flavor = lastFlavor
		return
	}
	best := int64(-1)
	for _, f := range fls {
		if v.Unavailable[f.Name] != "" || v.Waits[f.Name] != "" {
			continue
		}
		if r, ok := rates[f.Name]; ok && (best < 0 || r < best) {
			v.Flavor, best = f.Name, r
		}
	}
}
