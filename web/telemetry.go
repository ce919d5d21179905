package web

import (
	"context"
	"fmt"

	"workbench/orchestrator/gpu"
)

// SampleGPUs takes one GPU reading now, as the sampler loop of Run does
// every WORKBENCH_SAMPLE_INTERVAL (tests serve Handler without Run).
func (s *Server) SampleGPUs(ctx context.Context) error { return s.sampler.Collect(ctx) }

// gpuOptions are the inventory options of cfg: the test-injected ones, or
// for WORKBENCH_GPU_DEMO_LOAD the configured mock with a load to drive.
func gpuOptions(cfg Config) ([]gpu.Option, *gpu.MockLoad, error) {
	if !cfg.GPUDemoLoad {
		return cfg.GPUOptions, nil, nil
	}
	name := cfg.GPUMode().Mock
	lib, load, err := gpu.NewLiveMock(name)
	if err != nil {
		return nil, nil, fmt.Errorf("GPU demo load: %w", err)
	}
	return append([]gpu.Option{gpu.WithNVML(lib, true, gpu.KindMock+":"+name)}, cfg.GPUOptions...), load, nil
}

// runDemoLoad drives the demo load until ctx ends (nothing without one).
func (s *Server) runDemoLoad(ctx context.Context) {
	if s.demoLoad != nil {
		s.demoLoad.RunDemo(ctx, s.cfg.SampleEvery)
	}
}
