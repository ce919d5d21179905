package web_test

import (
	"strings"
	"testing"
	"time"

	"workbench/orchestrator"
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

func TestConfigGPURollupRetention(t *testing.T) {
	base := func(v string) web.Config {
		return web.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), GPUs: "mock:dgxh100", Currency: "USD", LogFormat: "text", LogLevel: "info",
			GPURollupRetention: v}
	}
	for v, want := range map[string]time.Duration{
		"":      0, // unset: the orchestrator's default (35 days)
		"35d":   35 * 24 * time.Hour,
		"90":    90 * 24 * time.Hour,
		"840h":  840 * time.Hour,
		" 7d ":  7 * 24 * time.Hour,
		"1h30m": 90 * time.Minute,
	} {
		c := base(v)
		if err := c.Validate(); err != nil || c.Workbenches.GPURollupRetention != want {
			t.Errorf("%q: %v, retention %v, want %v", v, err, c.Workbenches.GPURollupRetention, want)
		}
	}
	for _, bad := range []string{"0", "0d", "30m", "-5d", "soon", "3w", "d", "1.5d"} {
		c := base(bad)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), "WORKBENCH_GPU_ROLLUP_RETENTION") {
			t.Errorf("%q: %v, want an error naming WORKBENCH_GPU_ROLLUP_RETENTION", bad, err)
		}
	}
	if def := orchestrator.DefaultGPURollupRetention; def != 35*24*time.Hour {
		t.Errorf("default retention %v, want 35 days", def)
	}
}
