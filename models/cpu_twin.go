package models

import (
	"context"
	"errors"
)

// checkCPUTwin checks the CPU-only twin an admin named for a flavor: only a
// GPU flavor has one, and it must be another existing flavor without GPUs
// (a twin with GPUs would not free a GPU, which is the point).
func (s *Store) checkCPUTwin(ctx context.Context, f *Flavor) error {
	if f.CPUTwinID == 0 {
		return nil
	}
	if f.GPUCount == 0 {
		return invalid("cpu_twin_id", "only a flavor with GPUs has a CPU-only twin")
	}
	if f.CPUTwinID == f.ID {
		return invalid("cpu_twin_id", "a flavor cannot be its own twin")
	}
	twin, err := s.FlavorByID(ctx, f.CPUTwinID)
	if errors.Is(err, ErrNotFound) {
		return invalid("cpu_twin_id", "no such flavor")
	} else if err != nil {
		return err
	}
	if twin.GPUCount != 0 {
		return invalid("cpu_twin_id", "the twin must be a flavor without GPUs")
	}
	return nil
}

// ShapeFlavorID is the flavor the workbench's current (or last) run uses:
// its CPU-only twin when started without a GPU, else its own flavor.
func (w *Workbench) ShapeFlavorID() int64 {
	if w.RunFlavorID != 0 {
		return w.RunFlavorID
	}
	return w.FlavorID
}

// CPUOnly reports whether the current (or last) run is the CPU-only twin.
func (w *Workbench) CPUOnly() bool { return w.RunFlavorID != 0 && w.RunFlavorID != w.FlavorID }
