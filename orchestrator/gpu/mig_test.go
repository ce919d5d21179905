package gpu

import (
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
)

// createMIG partitions dev through the mock server's NVML API, the same
// calls nvidia-smi mig / mig-parted make: a GPU instance of giProfile and,
// inside it, one compute instance of ciProfile.
func createMIG(t *testing.T, dev nvml.Device, giProfile, ciProfile int) {
	t.Helper()
	giInfo, ret := dev.GetGpuInstanceProfileInfo(giProfile)
	if ret != nvml.SUCCESS {
		t.Fatalf("GI profile %d: %v", giProfile, ret)
	}
	gi, ret := dev.CreateGpuInstance(&giInfo)
	if ret != nvml.SUCCESS {
		t.Fatalf("create GI: %v", ret)
	}
	ciInfo, ret := gi.GetComputeInstanceProfileInfo(ciProfile, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
	if ret != nvml.SUCCESS {
		t.Fatalf("CI profile %d: %v", ciProfile, ret)
	}
	if _, ret := gi.CreateComputeInstance(&ciInfo); ret != nvml.SUCCESS {
		t.Fatalf("create CI: %v", ret)
	}
}

func TestMIGInstancesOnMock(t *testing.T) {
	server := dgxh100.New()
	dev, ret := server.DeviceGetHandleByIndex(2)
	if ret != nvml.SUCCESS {
		t.Fatal(ret)
	}
	if r, _ := dev.SetMigMode(nvml.DEVICE_MIG_ENABLE); r != nvml.SUCCESS {
		t.Fatal(r)
	}
	createMIG(t, dev, nvml.GPU_INSTANCE_PROFILE_1_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE)
	createMIG(t, dev, nvml.GPU_INSTANCE_PROFILE_3_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_3_SLICE)
	createMIG(t, dev, nvml.GPU_INSTANCE_PROFILE_2_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE)

	inv := mustNew(t, "mock:dgxh100", WithNVML(server, true, "mock:dgxh100"))
	if !inv.Simulated() || inv.Backend() != "mock:dgxh100" {
		t.Errorf("injected mock reports simulated=%v backend=%q", inv.Simulated(), inv.Backend())
	}
	devs, err := inv.Devices(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 8 {
		t.Fatalf("got %d devices", len(devs))
	}
	for i, d := range devs {
		if i != 2 && (d.MIGEnabled || len(d.MIG) > 0) {
			t.Errorf("device %d should not have MIG: %+v", i, d)
		}
	}
	d := devs[2]
	if !d.MIGEnabled {
		t.Fatal("device 2 should report MIG enabled")
	}
	want := []MIGInstance{
		{Profile: "1g.10gb", MemoryMiB: 10240, GPUInstanceID: 0, ComputeInstanceID: 0},
		{Profile: "3g.40gb", MemoryMiB: 40960, GPUInstanceID: 1, ComputeInstanceID: 0},
		{Profile: "1c.2g.20gb", MemoryMiB: 20480, GPUInstanceID: 2, ComputeInstanceID: 0},
	}
	if len(d.MIG) != len(want) {
		t.Fatalf("got %d MIG instances, want %d: %+v", len(d.MIG), len(want), d.MIG)
	}
	seen := map[string]bool{}
	for i, w := range want {
		got := d.MIG[i]
		if !strings.HasPrefix(got.UUID, "MIG-"+d.UUID+"/") || seen[got.UUID] {
			t.Errorf("MIG %d UUID %q is not a distinct MIG- identifier of %s", i, got.UUID, d.UUID)
		}
		seen[got.UUID] = true
		got.UUID = ""
		if got != w {
			t.Errorf("MIG %d = %+v, want %+v", i, got, w)
		}
	}
	// A MIG-enabled GPU is still sampled as one whole GPU.
	samples, err := inv.Sample(testCtx(t))
	if err != nil || len(samples) != 8 {
		t.Fatalf("Sample on MIG mock: %d readings, %v", len(samples), err)
	}
}
