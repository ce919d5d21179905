package handlers

import (
	"context"
	"testing"
	"time"

	"workbench/orchestrator/gpu"
)

// A whole GPU's memory reads against the GPU's own total, as /gpus shows
// it: a driver reading free memory as 0 made the workbench page say
// "0.0 / 0.0 GiB" beside /gpus' 80 GiB. Without the device's total, the
// sample's used plus free is the total.
func TestGPUTelemetryRowMemoryTotal(t *testing.T) {
	s := gpu.Sample{UUID: "GPU-1", At: time.Now(), MemUsedMiB: 1024}
	if got := gpuTelemetryRow(context.Background(), "GPU-1", []gpu.Sample{s}, 81920).MemNow; got != "1.0 / 80.0 GiB" {
		t.Errorf("with the device's total: %q, want 1.0 / 80.0 GiB", got)
	}
	s.MemFreeMiB = 1024
	if got := gpuTelemetryRow(context.Background(), "GPU-1", []gpu.Sample{s}, 0).MemNow; got != "1.0 / 2.0 GiB" {
		t.Errorf("from the sample: %q, want 1.0 / 2.0 GiB", got)
	}
}
