package handlers

import (
	"context"

	"workbench/models"
	"workbench/templates"
)

// flavorUnavailable says why a flavor cannot be launched now ("needs 8
// GPUs, 7 free"), or "" when it can. Such a flavor is disabled in the form.
// The text is a reason (models.Reasonf, its noun a key of the reasons
// catalog too): the form prints it in the reader's language.
func flavorUnavailable(f models.Flavor, free int) string {
	if f.GPUCount == 0 || free >= f.GPUCount {
		return ""
	}
	one, many := unitNoun(f)
	gpus := many
	if f.GPUCount == 1 {
		gpus = one
	}
	if free == 0 {
		return models.Reasonf("needs %d %s, none free", f.GPUCount, gpus)
	}
	return models.Reasonf("needs %d %s, %d free", f.GPUCount, gpus, free)
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
