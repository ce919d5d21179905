package handlers

import (
	"context"
	"fmt"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/orchestrator/gpu"
)

// sharedLabel is how a slice of a shared GPU is always labelled (form,
// workbench page, API note): its users are not isolated from each other.
const sharedLabel = "shared — no memory isolation"

// freeUnitsFor counts what a flavor could take now: free whole GPUs of its
// model, free MIG instances of its profile, or free slices of shared GPUs of
// its model (healthy, undrained GPUs only).
func freeUnitsFor(gpus []orchestrator.PoolGPU, f models.Flavor) int {
	if f.UnitKind == models.UnitMIG || f.UnitKind == models.UnitSlice {
		return partsFor(gpus, f, true)
	}
	n := 0
	for _, g := range gpus {
		if g.Model == f.GPUModel && g.State == orchestrator.GPUFree {
			n++
		}
	}
	return n
}

// unitPoolOf is the kind of unit a flavor asks for, as bookings name it.
func unitPoolOf(f models.Flavor) models.UnitPool {
	k := models.UnitPool{Kind: f.UnitKind, Model: f.GPUModel}
	if k.Kind == "" {
		k.Kind = models.UnitGPU
	}
	if k.Kind == models.UnitMIG {
		k.Profile = f.MIGProfile
	}
	return k
}

// lessBooked splits free units into those the viewer may take and those
// other users' active bookings hold back from them now (held: what the
// bookings hold back, free or not; a booked unit busy with someone's
// work is not free to begin with).
func lessBooked(free, held int) (take, booked int) {
	booked = min(max(held, 0), free)
	return free - booked, booked
}

// heldForOthers reads what other users' active bookings hold back from u
// now, every kind of unit at once (one read per page, not per row).
func (h *Handler) heldForOthers(ctx context.Context, u *models.User) (map[models.UnitPool]int, error) {
	return h.store.HeldForOthersNow(ctx, u.ID, h.wbs.Now())
}

// heldForAnyone reads what all active bookings hold back now, from someone
// who holds none: an administrator's view of the pool (one read per page).
func (h *Handler) heldForAnyone(ctx context.Context) (map[models.UnitPool]int, error) {
	return h.store.HeldForOthersNow(ctx, 0, h.wbs.Now()) // no user is 0
}

// poolUnitsFor counts what the pool could ever give a flavor, held or free:
// whole GPUs of its model that are healthy, undrained and not split into MIG
// instances (the scheduler's candidates, as Pool.CandidatesByModel counts
// them), MIG instances of its profile, or slices of shared GPUs of its
// model. A flavor asking for more can never start here; one asking for no
// more than this can wait in the queue. Whole GPUs are no measure of MIG
// instances: a model whose GPUs are all split has none whole, yet its
// instances queue like any unit.
func poolUnitsFor(gpus []orchestrator.PoolGPU, f models.Flavor) int {
	if f.UnitKind == models.UnitMIG || f.UnitKind == models.UnitSlice {
		return partsFor(gpus, f, false)
	}
	n := 0
	for _, g := range gpus {
		if g.Model == f.GPUModel && g.Health == gpu.HealthOK && !g.Drained && !g.MIGEnabled {
			n++
		}
	}
	return n
}

// unitsOfKindFor counts what the server has of a flavor's kind, in service
// or not: its model's GPUs, or the MIG instances of its profile (the
// slices) on its model's GPUs, drained or out of order ones included.
// Against poolUnitsFor it tells "this server has 0" from "the 7 it has
// are on a drained GPU".
func unitsOfKindFor(gpus []orchestrator.PoolGPU, f models.Flavor) int {
	if f.UnitKind != models.UnitMIG && f.UnitKind != models.UnitSlice {
		return gpusOfModel(gpus, f.GPUModel)
	}
	n := 0
	for _, g := range gpus {
		if g.Model != f.GPUModel {
			continue
		}
		for _, u := range g.Units {
			if u.Kind == f.UnitKind && (f.UnitKind != models.UnitMIG || u.Profile == f.MIGProfile) {
				n++
			}
		}
	}
	return n
}

// gpusOfModel counts the server's GPUs of model, whatever their state.
func gpusOfModel(gpus []orchestrator.PoolGPU, model string) int {
	n := 0
	for _, g := range gpus {
		if g.Model == model {
			n++
		}
	}
	return n
}

// partsFor counts the MIG instances of f's profile or the slices of shared
// GPUs that f (a MIG or slice flavor) could take, on healthy, undrained
// GPUs of its model; only those nobody holds when free is set.
func partsFor(gpus []orchestrator.PoolGPU, f models.Flavor, free bool) int {
	n := 0
	for _, g := range gpus {
		if g.Model != f.GPUModel || (g.State != orchestrator.GPUMIG && g.State != orchestrator.GPUShared) {
			continue // drained, unhealthy, or handed out whole
		}
		for _, u := range g.Units {
			if (!free || u.Free()) && u.Kind == f.UnitKind && (f.UnitKind != models.UnitMIG || u.Profile == f.MIGProfile) {
				n++
			}
		}
	}
	return n
}

// unitText describes what a flavor asks for: "2 × H100", "1 × MIG 1g.10gb
// (H100)", "1 slice of a shared H100".
func unitText(f models.Flavor) string {
	switch f.UnitKind {
	case models.UnitMIG:
		return fmt.Sprintf("%d × MIG %s (%s)", f.GPUCount, f.MIGProfile, models.ShortGPUName(f.GPUModel))
	case models.UnitSlice:
		return fmt.Sprintf("1 slice of a shared %s", models.ShortGPUName(f.GPUModel))
	}
	return fmt.Sprintf("%d × %s", f.GPUCount, f.GPUModel)
}

// unitNoun names a flavor's units for "needs 2 GPUs, 1 free".
func unitNoun(f models.Flavor) (one, many string) {
	switch f.UnitKind {
	case models.UnitMIG:
		return "MIG instance", "MIG instances"
	case models.UnitSlice:
		return "GPU slice", "GPU slices"
	}
	return "GPU", "GPUs"
}

// freeNoun is the plural of a flavor's unit, for "3 MIG instances".
func freeNoun(f models.Flavor) string {
	_, many := unitNoun(f)
	return many
}
