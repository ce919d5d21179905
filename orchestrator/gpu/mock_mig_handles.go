package gpu

import (
	"fmt"
	"sort"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// go-nvml's mock servers implement MIG through GPU and compute instances
// only; real NVML also hands out MIG device handles (GetMaxMigDeviceCount,
// GetMigDeviceHandleByIndex), the only source of the real "MIG-<uuid>"
// UUIDs and what unprivileged NVML allows. MockMIGHandles extends a mock
// with those calls, built from the mock's own instances, so tests exercise
// the discovery and per-instance sampling paths real hosts take. Each MIG
// device answers its memory (its profile's size, SetMemUsed's figure used)
// and, as most drivers do, NOT_SUPPORTED for utilisation — unless SetUtil
// gave the instance a utilisation (drivers that answer it per instance).
type MockMIGHandles struct {
	nvml.Interface
	mu   sync.Mutex
	used map[string]uint64           // MiB used, by MIG UUID
	util map[string]nvml.Utilization // per-instance utilisation, where answered
}

// NewMockMIGHandles wraps lib (a go-nvml mock server).
func NewMockMIGHandles(lib nvml.Interface) *MockMIGHandles {
	return &MockMIGHandles{Interface: lib, used: map[string]uint64{}, util: map[string]nvml.Utilization{}}
}

// SetUtil makes the MIG instance uuid answer utilisation (SM and memory
// copy, percent), as drivers that read it per instance do.
func (s *MockMIGHandles) SetUtil(uuid string, sm, mem uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.util[uuid] = nvml.Utilization{Gpu: sm, Memory: mem}
}

func (s *MockMIGHandles) utilOf(uuid string) (nvml.Utilization, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.util[uuid]
	return u, ok
}

// SetMemUsed sets the memory the MIG instance uuid reports in use.
func (s *MockMIGHandles) SetMemUsed(uuid string, usedMiB uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used[uuid] = usedMiB
}

func (s *MockMIGHandles) memUsed(uuid string) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.used[uuid]
}

// DeviceGetHandleByIndex hands out GPUs that know their MIG devices.
func (s *MockMIGHandles) DeviceGetHandleByIndex(i int) (nvml.Device, nvml.Return) {
	d, ret := s.Interface.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		return d, ret
	}
	return migCapable{Device: d, index: i, srv: s, walk: &migWalk{}}, nvml.SUCCESS
}

// migCapable is a mock GPU that lists its compute instances as MIG devices.
type migCapable struct {
	nvml.Device
	index int
	srv   *MockMIGHandles
	walk  *migWalk
}

// migWalk keeps one handle's list of MIG devices: a caller walks them by
// index (GetMigDeviceHandleByIndex 0..GetMaxMigDeviceCount), and listing
// the mock's instances for each index made a walk quadratic, a cost real
// NVML does not have. A handle lives for one inventory pass (handles are
// asked afresh each pass), so instances made or destroyed show on the
// next one.
type migWalk struct {
	once sync.Once
	hs   []migHandle
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
					out = append(out, migHandle{Device: d.Device, parent: d, srv: d.srv, gi: int(giInfo.Id), ci: int(ciInfo.Id),
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
	var hs []migHandle
	if d.walk != nil {
		d.walk.once.Do(func() { d.walk.hs = d.migHandles() })
		hs = d.walk.hs
	} else {
		hs = d.migHandles()
	}
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
	srv    *MockMIGHandles
}

// GetMemoryInfo answers the instance's own memory, as real MIG handles do.
func (m migHandle) GetMemoryInfo() (nvml.Memory, nvml.Return) {
	total := uint64(m.attrs.MemorySizeMB) * mib
	used := min(m.srv.memUsed(m.uuid)*mib, total)
	return nvml.Memory{Total: total, Used: used, Free: total - used}, nvml.SUCCESS
}

// GetUtilizationRates is not supported per MIG instance on most drivers
// (SetUtil makes it so for one instance).
func (m migHandle) GetUtilizationRates() (nvml.Utilization, nvml.Return) {
	if u, ok := m.srv.utilOf(m.uuid); ok {
		return u, nvml.SUCCESS
	}
	return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED
}

func (m migHandle) IsMigDeviceHandle() (bool, nvml.Return)              { return true, nvml.SUCCESS }
func (m migHandle) GetUUID() (string, nvml.Return)                      { return m.uuid, nvml.SUCCESS }
func (m migHandle) GetAttributes() (nvml.DeviceAttributes, nvml.Return) { return m.attrs, nvml.SUCCESS }
func (m migHandle) GetGpuInstanceId() (int, nvml.Return)                { return m.gi, nvml.SUCCESS }
func (m migHandle) GetComputeInstanceId() (int, nvml.Return)            { return m.ci, nvml.SUCCESS }
func (m migHandle) GetDeviceHandleFromMigDeviceHandle() (nvml.Device, nvml.Return) {
	return m.parent, nvml.SUCCESS
}
