package handlers

import (
	"context"
	"time"

	"workbench/models"
	"workbench/models/pricing"
	"workbench/templates/i18n"
)

// gpuRateSuggestion is the GPU rate the calculator suggests for a priced
// GPU model: the owned cost per GPU-hour at the target utilisation, less
// what the price list already charges a GPU-hour of the model's flavors
// for the CPU and memory that come with it. The TCO prices the whole
// server, CPUs and memory included; a GPU rate equal to the owned cost
// would recover the server and then charge its CPUs and memory again on
// top (about 20 % over with the default rates).
type gpuRateSuggestion struct {
	OwnedMicros int64 // owned cost per GPU-hour at the target utilisation
	// Flavor is the flavor whose CPU and memory share was taken off: of
	// the model's enabled whole-GPU flavors, the one with the smallest
	// share, so that no flavor recovers less than the owned cost. ""
	// when the model has no such flavor (nothing is taken off).
	Flavor              string
	CPUMilliPerGPU      int64
	MemoryMiBPerGPU     int64
	ShareMicros         int64 // its CPU and memory per GPU-hour at the current rates
	RateMicros          int64 // OwnedMicros − ShareMicros: what Apply sets
	ShareCoversAllOwned bool  // the share alone is the owned cost or more: no GPU rate to apply
}

// suggestGPURate works out the suggestion for model (a price-list model,
// see applyModel) from the owned cost per GPU-hour, at the rates in force
// at now.
func (e *calcEnv) suggestGPURate(model string, ownedMicros int64, now time.Time) (gpuRateSuggestion, error) {
	s := gpuRateSuggestion{OwnedMicros: ownedMicros, RateMicros: ownedMicros}
	found := false
	for _, f := range e.flavors {
		if !f.Enabled || (f.UnitKind != models.UnitGPU && f.UnitKind != "") || f.GPUCount <= 0 || f.GPUModel != model {
			continue
		}
		lines, err := pricing.PriceShape(pricing.Shape{CPUMilli: int64(f.CPUMilli), MemoryMiB: f.MemoryMiB}, now, now.Add(time.Hour), e.prices.Schedules)
		if err != nil {
			return s, err
		}
		share := divRoundMicros(pricing.SumResources(lines), int64(f.GPUCount))
		if !found || share < s.ShareMicros {
			found = true
			s.Flavor, s.ShareMicros = f.Name, share
			s.CPUMilliPerGPU = divRoundMicros(int64(f.CPUMilli), int64(f.GPUCount))
			s.MemoryMiBPerGPU = divRoundMicros(f.MemoryMiB, int64(f.GPUCount))
		}
	}
	s.RateMicros = ownedMicros - s.ShareMicros
	if s.RateMicros <= 0 {
		s.RateMicros, s.ShareCoversAllOwned = 0, true
	}
	// A rate reads with four decimals (pricing.Micros.Rate): Apply sets the
	// rate as shown, rounded up so that it still covers the owned cost. It
	// set 16.510532 after confirming "16.5105".
	s.RateMicros = (s.RateMicros + pricing.RateStep - 1) / pricing.RateStep * pricing.RateStep
	return s, nil
}

// divRoundMicros is n/d rounded half away from zero (d > 0).
func divRoundMicros(n, d int64) int64 {
	if n >= 0 {
		return (n + d/2) / d
	}
	return -((-n + d/2) / d)
}

// shareText says what was taken off the owned cost, for the page ("" when
// nothing was).
func (s gpuRateSuggestion) shareText(lc context.Context, perGPUHour func(context.Context, int64) string) string {
	if s.Flavor == "" {
		return ""
	}
	return i18n.T(lc, "Flavor %s also charges %s for the CPU and memory of each GPU (%s cores, %s GiB) at the current rates; the GPU rate that recovers the owned cost is the rest.",
		s.Flavor, perGPUHour(lc, s.ShareMicros), models.Millicores(s.CPUMilliPerGPU).String(), models.FormatMemoryGiB(s.MemoryMiBPerGPU))
}

// coversAllText says why there is no GPU rate to apply.
func (s gpuRateSuggestion) coversAllText(lc context.Context, perGPUHour func(context.Context, int64) string) string {
	return i18n.T(lc, "the CPU and memory rates alone charge %s per GPU of flavor %s, at least the owned cost of %s: there is no GPU rate to apply (lower the CPU and memory rates first)",
		perGPUHour(lc, s.ShareMicros), s.Flavor, perGPUHour(lc, s.OwnedMicros))
}
