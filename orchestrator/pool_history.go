package orchestrator

import (
	"time"

	"workbench/orchestrator/gpu"
)

// History is the sampler's bounded history of one GPU, oldest first (nil
// without a sampler).
func (p *Pool) History(uuid string) []gpu.Sample {
	if p.sampler == nil {
		return nil
	}
	return p.sampler.History(uuid)
}

// Fresh reports whether a sample taken at "at" is still the current
// reading (gpu.Sampler.Fresh); false without a sampler.
func (p *Pool) Fresh(at time.Time) bool {
	return p.sampler != nil && p.sampler.Fresh(at)
}
