package gpu

import (
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
)

// TestMIGInstancesFromDeviceHandles: with MIG device handles available (as
// on a real host), the inventory reports each instance under the driver's
// own MIG UUID — the ID a container's device request must name — with its
// profile, memory and instance IDs; GPUs without MIG report none.
func TestMIGInstancesFromDeviceHandles(t *testing.T) {
	server := dgxh100.New()
	dev, _ := server.DeviceGetHandleByIndex(5)
	if r, _ := dev.SetMigMode(nvml.DEVICE_MIG_ENABLE); r != nvml.SUCCESS {
		t.Fatal(r)
	}
	createMIG(t, dev, nvml.GPU_INSTANCE_PROFILE_3_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_3_SLICE)
	createMIG(t, dev, nvml.GPU_INSTANCE_PROFILE_1_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE)
	createMIG(t, dev, nvml.GPU_INSTANCE_PROFILE_1_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE)

	inv := mustNew(t, "mock:dgxh100", WithNVML(NewMockMIGHandles(server), true, "mock:dgxh100"))
	devs, err := inv.Devices(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 8 {
		t.Fatalf("%d devices", len(devs))
	}
	for i, d := range devs {
		if i != 5 && len(d.MIG) > 0 {
			t.Errorf("GPU %d lists MIG instances %+v", i, d.MIG)
		}
	}
	got := devs[5].MIG
	profiles := map[string]int{}
	seen := map[string]bool{}
	for _, m := range got {
		// Real MIG UUIDs, not the legacy MIG-<GPU>/<gi>/<ci> the
		// instance walk forms.
		if !strings.HasPrefix(m.UUID, "MIG-00000005-") || strings.Contains(m.UUID, "/") || seen[m.UUID] {
			t.Errorf("instance UUID %q is not a distinct MIG device UUID", m.UUID)
		}
		seen[m.UUID] = true
		profiles[m.Profile]++
		want := map[string]uint64{"1g.10gb": 10240, "3g.40gb": 40960}[m.Profile]
		if m.MemoryMiB != want {
			t.Errorf("%s memory %d MiB, want %d", m.Profile, m.MemoryMiB, want)
		}
	}
	if len(got) != 3 || profiles["1g.10gb"] != 2 || profiles["3g.40gb"] != 1 {
		t.Fatalf("MIG instances from handles: %+v", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i-1].GPUInstanceID > got[i].GPUInstanceID {
			t.Errorf("instances not in GPU instance order: %+v", got)
		}
	}
}
