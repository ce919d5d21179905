package handlers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"workbench/models"
)

// checkFlavorFits validates a flavor against this server, not only against
// itself: its GPU model must be one the pool has, and it cannot ask for
// more CPU cores than the host has (the engine would cap the limit while
// the flavor's price still counted every core asked for).
func (h *Handler) checkFlavorFits(ctx context.Context, f *models.Flavor) error {
	cpuErr := h.checkFlavorCPUs(ctx, f)
	if err := f.Validate(); err != nil { // its own rules first: they name every field at fault
		// More GPUs than the portal-wide bound: what this server has says
		// more than "between 0 and 16"; first, so that it is the one shown
		// for the field (FieldErrors' first) and by the API (errors.As).
		model := strings.TrimSpace(f.GPUModel)
		if f.GPUCount > 0 {
			if known, kerr := h.pool.Models(ctx); kerr == nil && containsString(known, model) {
				if cerr := h.checkFlavorGPUCount(ctx, f, model); cerr != nil {
					return errors.Join(cerr, cpuErr, err)
				}
			}
		}
		// The bound this server sets first too: the form's input has it
		// as its max, and "between 0.1 and 512" beside a max of 224 said
		// two bounds.
		return errors.Join(cpuErr, err)
	}
	if f.GPUCount > 0 {
		model := strings.TrimSpace(f.GPUModel)
		known, err := h.pool.Models(ctx)
		if err != nil {
			return err
		}
		if model != "" && !containsString(known, model) {
			if len(known) == 0 {
				return &models.ValidationError{Field: "gpu_model", Message: fmt.Sprintf("%q is not a GPU model of this server, which has no GPUs; make the flavor CPU-only (GPU count 0)", model)}
			}
			return &models.ValidationError{Field: "gpu_model", Message: fmt.Sprintf("%q is not a GPU model of this server; known models: %s", model, strings.Join(known, ", "))}
		}
		if err := h.checkFlavorGPUCount(ctx, f, model); err != nil {
			return err
		}
	}
	return cpuErr
}

// checkFlavorCPUs refuses CPU cores outside 0.1 and
// models.FlavorCPUBound of this host, the admin form's max: more than the
// host has, saying so, else out of the portal-wide range.
func (h *Handler) checkFlavorCPUs(ctx context.Context, f *models.Flavor) error {
	n := h.wbs.HostCPUs(ctx)
	if n > 0 && n <= models.MaxFlavorCPUs && f.CPUMilli > models.Millicores(n)*1000 {
		return &models.ValidationError{Field: "cpu_cores", Message: fmt.Sprintf("this server has %d CPU cores; a flavor cannot ask for %s", n, f.CPUMilli)}
	}
	return models.FlavorCPURangeError(f.CPUMilli, n)
}

// checkFlavorGPUCount refuses a flavor of more whole GPUs than this server
// has of its model: it could only ever queue (a 9-GPU flavor on an 8-GPU
// server was accepted, shown on the launch form and never placed). It
// counts as a launch does (Pool.Need, GPUNeed.NeverFits: one rule):
// drained and unhealthy GPUs count, they come back; GPUs split into MIG
// instances do not, the portal never repartitions them (an 8-GPU flavor
// with one of 8 split was accepted and every launch refused). On
// Kubernetes the pool spans nodes and a pod runs on one, so the count
// there says nothing and is not checked.
func (h *Handler) checkFlavorGPUCount(ctx context.Context, f *models.Flavor, model string) error {
	if (f.UnitKind != models.UnitGPU && f.UnitKind != "") || h.pool.OnKubernetes() {
		return nil
	}
	asked := *f
	asked.GPUModel = model
	need, err := h.pool.Need(ctx, &asked)
	if err != nil {
		return err
	}
	if need.NeverFits() {
		return &models.ValidationError{Field: "gpu_count", Message: fmt.Sprintf("this server has %d × %s that can be handed out whole (GPUs split into MIG instances cannot); a flavor cannot ask for %d", need.Structural, model, f.GPUCount)}
	}
	return nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// flavorCPUBound is the admin form's max of CPU cores: the one the server
// refuses past (checkFlavorCPUs).
func (h *Handler) flavorCPUBound(ctx context.Context) int {
	return models.FlavorCPUBound(h.wbs.HostCPUs(ctx))
}
