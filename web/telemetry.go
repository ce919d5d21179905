package web

import "context"

// SampleGPUs takes one GPU reading now, as the sampler loop of Run does
// every WORKBENCH_SAMPLE_INTERVAL (tests serve Handler without Run).
func (s *Server) SampleGPUs(ctx context.Context) error { return s.sampler.Collect(ctx) }
