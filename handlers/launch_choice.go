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

// flavorChoice sorts a GPU flavor for the launch form and the catalog by
// what the server holds, with the launch's own rule (need: Pool.Need of
// the flavor, GPUNeed.NeverFits). One asking for more units of its kind
// than the server has at all can never start here (unavailable: disabled,
// "needs 8 GPUs; this server has 7"); when some of the server's GPUs of
// its model are split into MIG instances (ofKind, unitsOfKindFor: all of
// them), the reason says so — "this server has 7" read as false on an
// 8-GPU server. One the server holds but whose units are not in service
// now (inPool, poolUnitsFor: drained or out of order ones left out), or
// not free now, waits in the queue (waits): drained and out-of-order GPUs
// come back, so a flavor they hold back is not called impossible.
// Otherwise both are "".
func flavorChoice(f models.Flavor, free, inPool, ofKind int, need models.GPUNeed) (unavailable, waits string) {
	noun := unitNounFor(f, f.GPUCount)
	parts := f.UnitKind == models.UnitMIG || f.UnitKind == models.UnitSlice
	if need.NeverFits() {
		if !parts && ofKind > need.Structural {
			return models.Reasonf("needs %d %s; %d of this server's %d can be handed out whole (the rest are split into MIG instances)",
				f.GPUCount, noun, need.Structural, ofKind), ""
		}
		return models.Reasonf("needs %d %s; this server has %d", f.GPUCount, noun, need.Structural), ""
	}
	if f.GPUCount > inPool {
		if parts {
			return "", models.Reasonf("needs %d %s; only %d are in service now, the others on a drained GPU or one out of order: it waits in the queue until they are back in service",
				f.GPUCount, noun, inPool)
		}
		return "", models.Reasonf("needs %d %s; only %d are in service now, the others drained or out of order: it waits in the queue until they are back in service",
			f.GPUCount, noun, inPool)
	}
	if why := flavorUnavailable(f, free); why != "" {
		return "", models.Reasonf("%s: it waits in the queue for a free GPU", why)
	}
	return "", ""
}

// serverRulesOut says what this server as it is now says of f, the same
// on the launch form and the catalog: never, why f can never launch here
// (more CPUs or memory than the host has, or more units of its kind than
// the server has at all), and outOfService, that the units it needs are
// drained or out of order now (it waits until they are back), or "".
// need is Pool.Need of f (Pool.Needs for a page's flavors).
func (h *Handler) serverRulesOut(ctx context.Context, f *models.Flavor, gpus []orchestrator.PoolGPU, need models.GPUNeed) (never, outOfService string) {
	if why := h.wbs.ExceedsHost(ctx, f); why != "" {
		return why, ""
	}
	inPool := poolUnitsFor(gpus, *f)
	never, _ = flavorChoice(*f, 0, inPool, unitsOfKindFor(gpus, *f), need)
	if never == "" && f.GPUCount > inPool {
		_, outOfService = flavorChoice(*f, 0, inPool, 0, need)
	}
	return never, outOfService
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

// launchRule is what the launch form says of flavor f for a user with
// limits lim, free of its units free to them now: unavailable, why it can
// never be launched (the quota or this server rules it out), or waits, why
// a launch would wait in the queue; both "" when it would start now. The
// launch form and the queued page's free flavors ask it alike.
func (h *Handler) launchRule(ctx context.Context, lim models.Limits, f *models.Flavor, gpus []orchestrator.PoolGPU, need models.GPUNeed, free int) (unavailable, waits string) {
	if why := quotaRulesOut(lim, *f); why != "" {
		return why, ""
	}
	if why, _ := h.serverRulesOut(ctx, f, gpus, need); why != "" {
		return why, ""
	}
	_, waits = flavorChoice(*f, free, poolUnitsFor(gpus, *f), unitsOfKindFor(gpus, *f), need)
	return "", waits
}
