package web_test

import (
	"strings"
	"testing"

	"workbench/web"
)

func TestConfigGPUIdleThreshold(t *testing.T) {
	base := func() web.Config {
		return web.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), GPUs: "mock:dgxh100", Currency: "USD", LogFormat: "text", LogLevel: "info"}
	}
	c := base()
	if err := c.Validate(); err != nil || c.GPUIdlePercent != 5 {
		t.Fatalf("default: %v, threshold %d, want 5", err, c.GPUIdlePercent)
	}
	for _, bad := range []int{-1, 101} {
		c := base()
		c.GPUIdlePercent = bad
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "WORKBENCH_GPU_IDLE_THRESHOLD") {
			t.Errorf("threshold %d: %v, want an error naming WORKBENCH_GPU_IDLE_THRESHOLD", bad, err)
		}
	}
}

func TestConfigGPUDemoLoadOnlySimulated(t *testing.T) {
	c := web.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), GPUs: "none", Currency: "USD", LogFormat: "text", LogLevel: "info", GPUDemoLoad: true}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "WORKBENCH_GPU_DEMO_LOAD") {
		t.Fatalf("demo load without simulated GPUs: %v", err)
	}
	c.GPUs = "mock:dgxh100"
	if err := c.Validate(); err != nil {
		t.Fatalf("demo load on a mock: %v", err)
	}
}
