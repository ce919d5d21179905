package gpu

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
)

// go-nvml's mock servers implement MIG through GPU and compute instances
// only; real NVML also hands out MIG device handles (GetMaxMigDeviceCount,
// GetMigDeviceHandleByIndex), the only source of the real "MIG-<uuid>"
// UUIDs and what unprivileged NVML allows. These wrappers extend the mock in
// test code with those calls, built from the mock's own instances, so the
// discovery path real hosts take is exercised.

// migServer is a mock server whose devices hand out MIG device handles.
type migServer struct {
	nvml.Interface
}

func (s migServer) DeviceGetHandleByIndex(i int) (nvml.Device, nvml.Return) {
	d, ret := s.Interface.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		return d, ret
	}
	return migCapable{Device: d, index: i}, nvml.SUCCESS
}

// migCapable is a mock GPU that lists its compute instances as MIG devices.
type migCapable struct {
	nvml.Device
	index int
}

// migHandles lists the MIG devices of the GPU as real NVML would: one per
// compute instance, in GPU-instance order.
func (d migCapable) migHandles() []migHandle {
	var out []migHandle
	for p := 0; p < nvml.GPU_INSTANCE_PROFILE_COUNT; p++ {
		info, ret := d.Device.GetGpuInstanceProfileInfo(p)
		if ret != nvml.SUCCESS {
			continue
		}
		gis, _ := d.Device.GetGpuInstances(&info)
		for _, gi := range gis {
			giInfo, _ := gi.GetInfo()
			for c := 0; c < nvml.COMPUTE_INSTANCE_PROFILE_COUNT; c++ {
				ciProf, ret := gi.GetComputeInstanceProfileInfo(c, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
				if ret != nvml.SUCCESS {
					continue
				}
				cis, _ := gi.GetComputeInstances(&ciProf)
				for _, ci := range cis {
					ciInfo, _ := ci.GetInfo()
					out = append(out, migHandle{Device: d.Device, parent: d, gi: int(giInfo.Id), ci: int(ciInfo.Id),
						attrs: nvml.DeviceAttributes{GpuInstanceSliceCount: info.SliceCount, ComputeInstanceSliceCount: ciProf.SliceCount,
							MemorySizeMB: info.MemorySizeMB},
						uuid: fmt.Sprintf("MIG-%08x-0000-4000-8000-%012x", d.index, giInfo.Id<<8|ciInfo.Id)})
				}
			}
		}
	}
	// The mock keeps its instances in maps: without a fixed order, two
	// GetMigDeviceHandleByIndex calls could name the same instance.
	sort.Slice(out, func(i, j int) bool {
		if out[i].gi != out[j].gi {
			return out[i].gi < out[j].gi
		}
		return out[i].ci < out[j].ci
	})
	return out
}

func (d migCapable) GetMaxMigDeviceCount() (int, nvml.Return) { return 7, nvml.SUCCESS }

func (d migCapable) GetMigDeviceHandleByIndex(i int) (nvml.Device, nvml.Return) {
	hs := d.migHandles()
	if i >= len(hs) {
		return nil, nvml.ERROR_NOT_FOUND
	}
	return hs[i], nvml.SUCCESS
}

// migHandle is one MIG device: its own UUID and attributes; anything else
// falls through to the parent GPU.
type migHandle struct {
	nvml.Device
	parent nvml.Device
	gi, ci int
	attrs  nvml.DeviceAttributes
	uuid   string
}

func (m migHandle) IsMigDeviceHandle() (bool, nvml.Return)              { return true, nvml.SUCCESS }
func (m migHandle) GetUUID() (string, nvml.Return)                      { return m.uuid, nvml.SUCCESS }
func (m migHandle) GetAttributes() (nvml.DeviceAttributes, nvml.Return) { return m.attrs, nvml.SUCCESS }
func (m migHandle) GetGpuInstanceId() (int, nvml.Return)                { return m.gi, nvml.SUCCESS }
func (m migHandle) GetComputeInstanceId() (int, nvml.Return)            { return m.ci, nvml.SUCCESS }
func (m migHandle) GetDeviceHandleFromMigDeviceHandle() (nvml.Device, nvml.Return) {
	return m.parent, nvml.SUCCESS
}

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

	inv := mustNew(t, "mock:dgxh100", WithNVML(migServer{server}, true, "mock:dgxh100"))
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
