package web

import (
	"context"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"workbench/orchestrator/gpu"
)

// SampleGPUs takes one GPU reading now, as the sampler loop of Run does
// every WORKBENCH_SAMPLE_INTERVAL (tests serve Handler without Run).
func (s *Server) SampleGPUs(ctx context.Context) error { return s.sampler.Collect(ctx) }

// gpuOptions are the inventory options of cfg: the test-injected ones, or
// for WORKBENCH_GPU_DEMO_LOAD the configured mock with a load to drive.
// WORKBENCH_MOCK_MIG partitions that mock into MIG instances first.
func gpuOptions(cfg Config) ([]gpu.Option, *gpu.MockLoad, error) {
	if !cfg.GPUDemoLoad && cfg.MockMIG == "" {
		return cfg.GPUOptions, nil, nil
	}
	name := cfg.GPUMode().Mock
	var lib nvml.Interface
	var load *gpu.MockLoad
	var err error
	if cfg.GPUDemoLoad {
		lib, load, err = gpu.NewLiveMock(name)
	} else {
		lib, err = gpu.NewMock(name)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("GPU demo load: %w", err)
	}
	if cfg.MockMIG != "" {
		parts, err := gpu.ParseMockMIG(cfg.MockMIG)
		if err == nil {
			err = gpu.PartitionMock(lib, parts)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("WORKBENCH_MOCK_MIG: %w", err)
		}
		// MIG device handles, as real NVML hands out: the instances' own
		// memory, and with the demo load their own utilisation too.
		h := gpu.NewMockMIGHandles(lib)
		if load != nil {
			load.DriveMIG(h)
		}
		lib = h
	}
	return append([]gpu.Option{gpu.WithNVML(lib, true, gpu.KindMock+":"+name)}, cfg.GPUOptions...), load, nil
}

// InventoryOptions are the GPU inventory options cfg asks for (a partitioned
// or loaded mock), for commands that read the inventory without serving.
func InventoryOptions(cfg Config) ([]gpu.Option, error) {
	opts, _, err := gpuOptions(cfg)
	return opts, err
}

// runDemoLoad drives the demo load until ctx ends (nothing without one).
func (s *Server) runDemoLoad(ctx context.Context) {
	if s.demoLoad != nil {
		s.demoLoad.RunDemo(ctx, s.cfg.SampleEvery)
	}
}
