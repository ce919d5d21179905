package main

import (
	"context"
	"encoding/json"
	"flag"
	"os"

	"workbench/models"
	"workbench/web"
)

// settingServeGPUs records where the last `serve` on a data directory
// took its GPUs from: `workbench gpus` on that directory, told nothing
// else, reads the same GPUs. It read the host's (none, on a machine
// without a driver: "running without GPUs") while a portal served 8
// simulated ones (SPEC §8: these commands work beside a running server).
const settingServeGPUs = "serve_gpu_source"

// gpuSource is what settingServeGPUs holds.
type gpuSource struct {
	GPUs     string `json:"gpus"`
	MockMIG  string `json:"mock_mig,omitempty"`
	DemoLoad bool   `json:"demo_load,omitempty"`
}

// recordGPUSource stores cfg's GPU source for the commands beside serve.
func recordGPUSource(ctx context.Context, store *models.Store, cfg web.Config) error {
	b, err := json.Marshal(gpuSource{GPUs: cfg.GPUs, MockMIG: cfg.MockMIG, DemoLoad: cfg.GPUDemoLoad})
	if err != nil {
		return err
	}
	return store.SetSetting(ctx, settingServeGPUs, string(b))
}

// useServeGPUSource sets cfg's GPU source to the one serve recorded on the
// data directory, unless the command was given one (--gpus or
// WORKBENCH_GPUS); it reports whether it did.
func useServeGPUSource(ctx context.Context, store *models.Store, fs *flag.FlagSet, cfg *web.Config) (bool, error) {
	given := os.Getenv("WORKBENCH_GPUS") != ""
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "gpus" })
	if given {
		return false, nil
	}
	v, err := store.Setting(ctx, settingServeGPUs)
	if err != nil || v == "" {
		return false, err
	}
	var src gpuSource
	if err := json.Unmarshal([]byte(v), &src); err != nil || src.GPUs == "" {
		return false, nil // unreadable: the command's own default stands
	}
	cfg.GPUs, cfg.MockMIG, cfg.GPUDemoLoad = src.GPUs, src.MockMIG, src.DemoLoad
	return true, cfg.Validate()
}
