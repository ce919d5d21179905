package handlers

import (
	"context"
	"slices"

	"workbench/models"
	"workbench/templates"
	"workbench/templates/i18n"
)

// A quota may cap GPUs per model ("at most 2 × H100 at once", set through
// the API). The usage page and the quota console show one bar per capped
// model beside "GPUs in use", so a person told "your quota allows at most
// 0 × H100 80GB HBM3 at once" can see the cap, and an admin asked why a
// user cannot launch can find it.

// gpusInUseByModel counts, per owner and GPU model, the GPUs bound to the
// active workbenches wbs: what the per-model cap is checked against.
func (h *Handler) gpusInUseByModel(ctx context.Context, wbs []models.Workbench) (map[int64]map[string]int, error) {
	flavors, err := h.store.ListFlavors(ctx, false)
	if err != nil {
		return nil, err
	}
	modelOf := make(map[int64]string, len(flavors))
	for _, f := range flavors {
		modelOf[f.ID] = f.GPUModel
	}
	out := map[int64]map[string]int{}
	for _, w := range wbs {
		m := modelOf[w.FlavorID]
		if m == "" || len(w.GPUs) == 0 {
			continue
		}
		if out[w.OwnerID] == nil {
			out[w.OwnerID] = map[string]int{}
		}
		out[w.OwnerID][m] += len(w.GPUs)
	}
	return out, nil
}

// perModelBars is one bar per GPU model lim caps, in name order.
func perModelBars(lc context.Context, lim models.Limits, inUse map[string]int) []templates.QuotaBar {
	names := make([]string, 0, len(lim.MaxGPUsPerModel))
	for m := range lim.MaxGPUsPerModel {
		names = append(names, m)
	}
	slices.Sort(names)
	bars := make([]templates.QuotaBar, 0, len(names))
	for _, m := range names {
		n := int64(lim.MaxGPUsPerModel[m])
		bars = append(bars, quotaBar("gpus-model", i18n.T(lc, "%s in use", models.ShortGPUName(m)), int64(inUse[m]), &n, countText))
	}
	return bars
}
