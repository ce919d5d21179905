package orchestrator

import "workbench/orchestrator/gpu"

// History is the sampler's bounded history of one GPU, oldest first (nil
// without a sampler).
func (p *Pool) History(uuid string) []gpu.Sample {
	if p.sampler == nil {
		return nil
	}
	return p.sampler.History(uuid)
}
