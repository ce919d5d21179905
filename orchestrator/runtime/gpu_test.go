package runtime

import (
	"reflect"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/system"
)

func TestGPUDeviceRequests(t *testing.T) {
	uuids := []string{"GPU-aaaa", "GPU-bbbb"}
	tests := []struct {
		name    string
		in      GPURequest
		wantReq []container.DeviceRequest
		wantEnv []string
	}{
		{
			name: "real GPUs get one nvidia request with exactly those UUIDs",
			in:   GPURequest{UUIDs: uuids},
			wantReq: []container.DeviceRequest{{
				Driver:       "nvidia",
				DeviceIDs:    uuids,
				Capabilities: [][]string{{"gpu", "compute", "utility"}},
			}},
			wantEnv: []string{"NVIDIA_VISIBLE_DEVICES=GPU-aaaa,GPU-bbbb"},
		},
		{
			name:    "simulated GPUs make no request, only the env",
			in:      GPURequest{UUIDs: uuids, Simulated: true},
			wantEnv: []string{"WORKBENCH_SIMULATED_GPUS=GPU-aaaa,GPU-bbbb", "NVIDIA_VISIBLE_DEVICES=void"},
		},
		{
			name:    "no GPUs pin NVIDIA_VISIBLE_DEVICES to void",
			in:      GPURequest{},
			wantEnv: []string{"NVIDIA_VISIBLE_DEVICES=void"},
		},
		{
			name:    "simulated without GPUs",
			in:      GPURequest{Simulated: true},
			wantEnv: []string{"WORKBENCH_SIMULATED_GPUS=", "NVIDIA_VISIBLE_DEVICES=void"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, env := gpuDeviceRequests(tt.in)
			if !reflect.DeepEqual(req, tt.wantReq) {
				t.Errorf("requests = %+v, want %+v", req, tt.wantReq)
			}
			if !reflect.DeepEqual(env, tt.wantEnv) {
				t.Errorf("env = %q, want %q", env, tt.wantEnv)
			}
			// What Create writes, ContainerInfo.GPUs reads back.
			back := ContainerInfo{Env: append([]string{"NVIDIA_VISIBLE_DEVICES=all"}, env...)}.GPUs()
			if back.Simulated != tt.in.Simulated || !reflect.DeepEqual(back.UUIDs, tt.in.UUIDs) {
				t.Errorf("GPUs() = %+v, want %+v", back, tt.in)
			}
		})
	}
}

func TestGPUDeviceRequestsCopiesUUIDs(t *testing.T) {
	uuids := []string{"GPU-1"}
	req, _ := gpuDeviceRequests(GPURequest{UUIDs: uuids})
	uuids[0] = "GPU-changed"
	if req[0].DeviceIDs[0] != "GPU-1" {
		t.Fatal("device request aliases the caller's slice")
	}
}

func TestNVIDIASupport(t *testing.T) {
	tests := []struct {
		name string
		info system.Info
		want bool
	}{
		{"plain engine", system.Info{Runtimes: map[string]system.RuntimeWithStatus{"runc": {}}}, false},
		{"nvidia runtime", system.Info{Runtimes: map[string]system.RuntimeWithStatus{"nvidia": {}}}, true},
		{"CDI on but no devices (every Docker ≥ 27)", system.Info{CDISpecDirs: []string{"/etc/cdi", "/var/run/cdi"}}, false},
		{"CDI with NVIDIA GPUs", system.Info{
			CDISpecDirs:       []string{"/etc/cdi"},
			DiscoveredDevices: []system.DeviceInfo{{Source: "cdi", ID: "nvidia.com/gpu=0"}},
		}, true},
		{"CDI with other devices", system.Info{
			CDISpecDirs:       []string{"/etc/cdi"},
			DiscoveredDevices: []system.DeviceInfo{{Source: "cdi", ID: "vendor.com/fpga=0"}},
		}, false},
	}
	for _, tt := range tests {
		if got := nvidiaSupport(tt.info); got != tt.want {
			t.Errorf("%s: nvidiaSupport = %v, want %v", tt.name, got, tt.want)
		}
	}
}
