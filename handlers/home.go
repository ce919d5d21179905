package handlers

import (
	"context"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/templates"
	"workbench/templates/i18n"
)

// home lists the user's workbenches.
func (h *Handler) home(c *gin.Context) {
	ctx := c.Request.Context()
	gpus, err := h.pool.ListRecent(ctx)
	if err != nil {
		h.fail(c, err)
		return
	}
	rows, err := h.listRows(ctx, currentUser(c).ID)
	if err != nil {
		h.fail(c, err)
		return
	}
	// The pool line counts what this user may take, as the launch form
	// does: units others' active bookings hold back now are counted apart.
	held, err := h.heldForOthers(ctx, currentUser(c))
	if err != nil {
		h.fail(c, err)
		return
	}
	v := templates.HomeView{Workbenches: rows, GPUSummary: gpuSummary(ctx, gpus, held)}
	if err := h.wbs.EngineRecentlyUp(ctx); err != nil {
		v.EngineDown = i18n.T(ctx, "The Docker engine is not reachable: workbenches cannot be launched or changed until it is back.")
		if h.pool.OnKubernetes() {
			v.EngineDown = i18n.T(ctx, "The Kubernetes API server is not reachable: workbenches cannot be launched or changed until it is back.")
		}
	}
	h.render(c, http.StatusOK, templates.HomePage(h.workPage(c, i18n.T(c.Request.Context(), "Workbenches")), v))
}

// gpuSummary is a one-line description of the pool, e.g. "8 GPUs, 7
// free." A pool with MIG or shared GPUs also counts their free units: with
// every whole GPU taken it had read "0 free" while slices and MIG
// instances waited for takers. Free is what the viewer may take: held are
// the units others' active bookings hold back from them now
// (heldForOthers), told apart ("8 GPUs, 4 free · 3 reserved for others now.").
//
// A GPU split into MIG instances or shared in slices is counted with its
// units, not among the whole GPUs: "8 GPUs, 4 free" for 7 whole GPUs and
// one in MIG instances read as 8 whole GPUs. Then the line says "7 whole
// GPUs, 4 free. 1 GPU split into 2 MIG instances: 1 free." — each kind
// its GPUs, its units and what is free of them.
func gpuSummary(ctx context.Context, gpus []orchestrator.PoolGPU, held map[models.UnitPool]int) string {
	if len(gpus) == 0 {
		return i18n.T(ctx, "No GPUs in the pool.")
	}
	// Free units by kind of unit as bookings name them (model, and
	// profile for MIG), for each kind's bookings to be taken from its own.
	free := map[models.UnitPool]int{}
	// GPUs and their units by kind: whole, in MIG instances, in slices.
	gpusOf, unitsOf := map[string]int{}, map[string]int{}
	for _, g := range gpus {
		kind := gpuKind(g)
		gpusOf[kind]++
		for _, u := range g.Units {
			if u.Kind == kind {
				unitsOf[kind]++
			}
		}
		if kind == models.UnitSlice && g.SharedSlices > len(g.Units) {
			unitsOf[kind] += g.SharedSlices - len(g.Units)
		}
		if g.State == orchestrator.GPUFree {
			free[models.UnitPool{Kind: models.UnitGPU, Model: g.Model}]++
		}
		if g.State != orchestrator.GPUMIG && g.State != orchestrator.GPUShared {
			continue // whole, drained or out of order: its units are not offered
		}
		for _, u := range g.Units {
			if !u.Free() || (u.Kind != models.UnitMIG && u.Kind != models.UnitSlice) {
				continue
			}
			k := models.UnitPool{Kind: u.Kind, Model: g.Model}
			if u.Kind == models.UnitMIG {
				k.Profile = u.Profile
			}
			free[k]++
		}
	}
	take, booked := map[string]int{}, map[string]int{}
	for k, n := range free {
		t, b := lessBooked(n, held[k])
		take[k.Kind] += t
		booked[k.Kind] += b
	}
	whole := gpusOf[models.UnitGPU]
	if whole == len(gpus) {
		// Every GPU whole: nothing to tell apart.
		if booked[models.UnitGPU] > 0 {
			return i18n.T(ctx, "%d GPUs, %d free · %d reserved for others now.", whole, take[models.UnitGPU], booked[models.UnitGPU])
		}
		return i18n.T(ctx, "%d GPUs, %d free.", whole, take[models.UnitGPU])
	}
	// Only the kinds the pool has ("0 slices free" hinted at slices that
	// no GPU is shared in); punctuation from the catalog (。 in Chinese).
	var s string
	switch {
	case whole == 0:
	case booked[models.UnitGPU] > 0:
		s = i18n.T(ctx, "%d whole GPUs, %d free · %d reserved for others now.", whole, take[models.UnitGPU], booked[models.UnitGPU])
	default:
		s = i18n.T(ctx, "%d whole GPUs, %d free.", whole, take[models.UnitGPU])
	}
	if n := gpusOf[models.UnitMIG]; n > 0 {
		instances := i18n.T(ctx, "%d MIG instances", unitsOf[models.UnitMIG])
		s += i18n.T(ctx, " %s.", withBooked(ctx, i18n.T(ctx, "%d GPUs split into %s: %d free", n, instances, take[models.UnitMIG]), booked[models.UnitMIG]))
	}
	if n := gpusOf[models.UnitSlice]; n > 0 {
		slices := i18n.T(ctx, "%d slices", unitsOf[models.UnitSlice])
		s += i18n.T(ctx, " %s.", withBooked(ctx, i18n.T(ctx, "%d GPUs shared in %s: %d free", n, slices, take[models.UnitSlice]), booked[models.UnitSlice]))
	}
	return strings.TrimSpace(s)
}

// gpuKind is how a GPU is handed out: whole (models.UnitGPU), in MIG
// instances or in shared slices, as its admin set it up, whatever its
// state now (a drained shared GPU is still one shared in slices, though
// none is offered).
func gpuKind(g orchestrator.PoolGPU) string {
	switch {
	case g.MIGEnabled || g.State == orchestrator.GPUMIG:
		return models.UnitMIG
	case g.SharedSlices > 0 || g.State == orchestrator.GPUShared:
		return models.UnitSlice
	}
	return models.UnitGPU
}

// withBooked adds to a count of free units ("2 slices free") those
// others' bookings hold back, when there are any ("· 1 reserved for others
// now").
func withBooked(ctx context.Context, free string, booked int) string {
	if booked > 0 {
		return i18n.T(ctx, "%s · %d reserved for others now", free, booked)
	}
	return free
}
