package runtime

import (
	"strings"

	"github.com/docker/docker/api/types/container"
)

// Environment variables that carry the GPU assignment into the container.
const (
	// EnvNVIDIAVisible is read by the NVIDIA container toolkit; setting it
	// next to the device request keeps images that look at it consistent
	// with what was actually passed.
	EnvNVIDIAVisible = "NVIDIA_VISIBLE_DEVICES"
	// EnvSimulatedGPUs lists the simulated GPUs a container was given, so
	// tests (and the user) can see the assignment without real devices.
	EnvSimulatedGPUs = "WORKBENCH_SIMULATED_GPUS"
)

// gpuCapabilities: "gpu" selects the NVIDIA driver, compute+utility give
// CUDA and nvidia-smi — nothing more (no video, display, graphics).
var gpuCapabilities = [][]string{{"gpu", "compute", "utility"}}

// gpuDeviceRequests turns a GPU request into the engine's device requests
// and the environment that goes with them. Simulated GPUs → no device
// request, only EnvSimulatedGPUs.
//
// Whenever no real GPU is requested NVIDIA_VISIBLE_DEVICES is pinned to
// "void": an image built on nvidia/cuda carries NVIDIA_VISIBLE_DEVICES=all,
// and on a host whose default runtime is nvidia that alone would hand the
// container every GPU.
func gpuDeviceRequests(g GPURequest) ([]container.DeviceRequest, []string) {
	ids := strings.Join(g.UUIDs, ",")
	if g.Simulated {
		return nil, []string{EnvSimulatedGPUs + "=" + ids, EnvNVIDIAVisible + "=void"}
	}
	if len(g.UUIDs) == 0 {
		return nil, []string{EnvNVIDIAVisible + "=void"}
	}
	req := container.DeviceRequest{
		Driver:       "nvidia",
		DeviceIDs:    append([]string(nil), g.UUIDs...),
		Capabilities: gpuCapabilities,
	}
	return []container.DeviceRequest{req}, []string{EnvNVIDIAVisible + "=" + ids}
}

// GPUs reads back which GPUs a container was created with, from the
// environment Create set, so the lifecycle manager can tell whether an
// existing container must be recreated for a new GPU set.
func (i ContainerInfo) GPUs() GPURequest {
	var g GPURequest
	for _, kv := range i.Env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case EnvSimulatedGPUs:
			g.Simulated = true
			g.UUIDs = splitList(v)
		case EnvNVIDIAVisible:
			if !g.Simulated {
				g.UUIDs = splitList(v)
			}
		}
	}
	return g
}

// splitList splits a comma list, treating empty and the toolkit's
// "void"/"none" as no GPUs.
func splitList(v string) []string {
	if v == "" || v == "void" || v == "none" {
		return nil
	}
	return strings.Split(v, ",")
}
