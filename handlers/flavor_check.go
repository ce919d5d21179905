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
	if err := f.Validate(); err != nil { // its own rules first: they name every field at fault
		// More GPUs than the portal-wide bound: what this server has says
		// more than "between 0 and 16"; first, so that it is the one shown
		// for the field (FieldErrors' first) and by the API (errors.As).
		model := strings.TrimSpace(f.GPUModel)
		if f.GPUCount > 0 {
			if known, kerr := h.pool.Models(ctx); kerr == nil && containsString(known, model) {
				if cerr := h.checkFlavorGPUCount(ctx, f, model); cerr != nil {
					return errors.Join(cerr, err)
				}
			}
		}
		return err
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
	if n := h.wbs.HostCPUs(ctx); n > 0 && f.CPUMilli > models.Millicores(n)*1000 {
		return &models.ValidationError{Field: "cpu_cores", Message: fmt.Sprintf("this server has %d CPU cores; a flavor cannot ask for %s", n, f.CPUMilli)}
	}
	return nil
}

// checkFlavorGPUCount refuses a flavor of more whole GPUs than this server
// has of its model: it could only ever queue (a 9-GPU flavor on an 8-GPU
// server was accepted, shown on the launch form and never placed). It
// counts every GPU of the model, drained and MIG-enabled ones too, since
// those change back; on Kubernetes the pool spans nodes and a pod runs on
// one, so the count there says nothing and is not checked.
func (h *Handler) checkFlavorGPUCount(ctx context.Context, f *models.Flavor, model string) error {
	if (f.UnitKind != models.UnitGPU && f.UnitKind != "") || h.pool.OnKubernetes() {
		return nil
	}
	byUUID, err := h.pool.ModelByUUID(ctx)
	if err != nil {
		return err
	}
	n := 0
	for _, m := range byUUID {
		if m == model {
			n++
		}
	}
	if f.GPUCount > n {
		return &models.ValidationError{Field: "gpu_count", Message: fmt.Sprintf("this server has %d × %s; a flavor cannot ask for %d", n, model, f.GPUCount)}
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
