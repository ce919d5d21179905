package gpu

import (
	"fmt"
	"slices"

	"github.com/NVIDIA/go-nvlib/pkg/nvlib/device"
	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// listMIG lists the MIG instances of a MIG-enabled GPU, ordered by GPU
// instance then compute instance ID. Caller holds b.mu.
//
// Two ways, because neither works everywhere:
//   - MIG device handles (go-nvlib VisitMigDevices): what real NVML offers
//     unprivileged, and the only source of the real "MIG-<uuid>" UUIDs.
//     go-nvml's mock servers do not implement these calls.
//   - GPU instance / compute instance walk: what the mock servers do
//     implement (and what real NVML allows only to privileged users).
//     It has no MIG UUID, so one is formed in the legacy
//     "MIG-<GPU-UUID>/<gi>/<ci>" notation.
func (b *nvmlInventory) listMIG(dev nvml.Device, gpuUUID string, totalBytes uint64) ([]MIGInstance, error) {
	out, errHandles := b.migFromHandles(dev, totalBytes)
	if errHandles == nil {
		return sortMIG(out), nil
	}
	out, errInstances := b.migFromInstances(dev, gpuUUID, totalBytes)
	if errInstances == nil {
		return sortMIG(out), nil
	}
	return nil, fmt.Errorf("MIG device handles: %v; GPU instances: %v", errHandles, errInstances)
}

func (b *nvmlInventory) migFromHandles(dev nvml.Device, totalBytes uint64) ([]MIGInstance, error) {
	var out []MIGInstance
	err := callErr(func() error {
		d, err := b.devlib.NewDevice(dev)
		if err != nil {
			return err
		}
		return d.VisitMigDevices(func(_ int, m device.MigDevice) error {
			uuid, ret := m.GetUUID()
			if ret != nvml.SUCCESS {
				return fmt.Errorf("MIG UUID: %v", ret)
			}
			attrs, ret := m.GetAttributes()
			if ret != nvml.SUCCESS {
				return fmt.Errorf("MIG attributes: %v", ret)
			}
			gi, ret := m.GetGpuInstanceId()
			if ret != nvml.SUCCESS {
				return fmt.Errorf("MIG GPU instance ID: %v", ret)
			}
			ci, ret := m.GetComputeInstanceId()
			if ret != nvml.SUCCESS {
				return fmt.Errorf("MIG compute instance ID: %v", ret)
			}
			out = append(out, MIGInstance{
				UUID:              uuid,
				Profile:           b.migProfileName(m, attrs, totalBytes),
				MemoryMiB:         attrs.MemorySizeMB, // NVML "MB" is MiB
				GPUInstanceID:     gi,
				ComputeInstanceID: ci,
			})
			return nil
		})
	})
	return out, err
}

// migProfileName prefers go-nvlib's exact profile (with "+me" and similar
// attributes). That lookup needs GPU instance queries, which real NVML
// refuses to unprivileged users; then the name is built from the slice
// counts in the MIG device's attributes (e.g. "1g.10gb"), without attributes.
func (b *nvmlInventory) migProfileName(m device.MigDevice, attrs nvml.DeviceAttributes, totalBytes uint64) string {
	var name string
	if callErr(func() error {
		p, err := m.GetProfile()
		if err == nil {
			name = p.String()
		}
		return err
	}) == nil {
		return name
	}
	gi, okG := giProfileBySlices[attrs.GpuInstanceSliceCount]
	ci, okC := ciProfileBySlices[attrs.ComputeInstanceSliceCount]
	if !okG || !okC {
		return fmt.Sprintf("%dc.%dg", attrs.ComputeInstanceSliceCount, attrs.GpuInstanceSliceCount)
	}
	p, err := b.devlib.NewMigProfile(gi, ci, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED, attrs.MemorySizeMB, totalBytes)
	if err != nil {
		return fmt.Sprintf("%dc.%dg", attrs.ComputeInstanceSliceCount, attrs.GpuInstanceSliceCount)
	}
	return p.String()
}

// Base (attribute-less) profile IDs by slice count, for naming only.
var giProfileBySlices = map[uint32]int{
	1: nvml.GPU_INSTANCE_PROFILE_1_SLICE, 2: nvml.GPU_INSTANCE_PROFILE_2_SLICE,
	3: nvml.GPU_INSTANCE_PROFILE_3_SLICE, 4: nvml.GPU_INSTANCE_PROFILE_4_SLICE,
	6: nvml.GPU_INSTANCE_PROFILE_6_SLICE, 7: nvml.GPU_INSTANCE_PROFILE_7_SLICE,
	8: nvml.GPU_INSTANCE_PROFILE_8_SLICE,
}

var ciProfileBySlices = map[uint32]int{
	1: nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE, 2: nvml.COMPUTE_INSTANCE_PROFILE_2_SLICE,
	3: nvml.COMPUTE_INSTANCE_PROFILE_3_SLICE, 4: nvml.COMPUTE_INSTANCE_PROFILE_4_SLICE,
	6: nvml.COMPUTE_INSTANCE_PROFILE_6_SLICE, 7: nvml.COMPUTE_INSTANCE_PROFILE_7_SLICE,
	8: nvml.COMPUTE_INSTANCE_PROFILE_8_SLICE,
}

// skippable are answers meaning "no such profile on this GPU".
func skippable(ret nvml.Return) bool {
	return ret == nvml.ERROR_NOT_SUPPORTED || ret == nvml.ERROR_INVALID_ARGUMENT
}

func (b *nvmlInventory) migFromInstances(dev nvml.Device, gpuUUID string, totalBytes uint64) ([]MIGInstance, error) {
	type key struct{ gi, ci uint32 }
	seen := map[key]bool{}
	var out []MIGInstance
	for i := 0; i < nvml.GPU_INSTANCE_PROFILE_COUNT; i++ {
		giProf, ret := call1(func() (nvml.GpuInstanceProfileInfo, nvml.Return) { return dev.GetGpuInstanceProfileInfo(i) })
		if skippable(ret) {
			continue
		}
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("GPU instance profile %d: %v", i, ret)
		}
		gis, ret := call1(func() ([]nvml.GpuInstance, nvml.Return) { return dev.GetGpuInstances(&giProf) })
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("GPU instances of profile %d: %v", i, ret)
		}
		for _, gi := range gis {
			giInfo, ret := call1(gi.GetInfo)
			if ret != nvml.SUCCESS {
				return nil, fmt.Errorf("GPU instance info: %v", ret)
			}
			for j := 0; j < nvml.COMPUTE_INSTANCE_PROFILE_COUNT; j++ {
				for k := 0; k < nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_COUNT; k++ {
					ciProf, ret := call1(func() (nvml.ComputeInstanceProfileInfo, nvml.Return) {
						return gi.GetComputeInstanceProfileInfo(j, k)
					})
					if skippable(ret) {
						continue
					}
					if ret != nvml.SUCCESS {
						return nil, fmt.Errorf("compute instance profile %d/%d: %v", j, k, ret)
					}
					cis, ret := call1(func() ([]nvml.ComputeInstance, nvml.Return) { return gi.GetComputeInstances(&ciProf) })
					if ret != nvml.SUCCESS {
						return nil, fmt.Errorf("compute instances: %v", ret)
					}
					for _, ci := range cis {
						ciInfo, ret := call1(ci.GetInfo)
						if ret != nvml.SUCCESS {
							return nil, fmt.Errorf("compute instance info: %v", ret)
						}
						kk := key{giInfo.Id, ciInfo.Id}
						if seen[kk] {
							continue
						}
						seen[kk] = true
						name := fmt.Sprintf("profile-%d/%d", i, j)
						if p, err := b.devlib.NewMigProfile(i, j, k, giProf.MemorySizeMB, totalBytes); err == nil {
							name = p.String()
						}
						out = append(out, MIGInstance{
							UUID:              fmt.Sprintf("MIG-%s/%d/%d", gpuUUID, giInfo.Id, ciInfo.Id),
							Profile:           name,
							MemoryMiB:         giProf.MemorySizeMB,
							GPUInstanceID:     int(giInfo.Id),
							ComputeInstanceID: int(ciInfo.Id),
						})
					}
				}
			}
		}
	}
	return out, nil
}

func sortMIG(m []MIGInstance) []MIGInstance {
	slices.SortFunc(m, func(a, b MIGInstance) int {
		if a.GPUInstanceID != b.GPUInstanceID {
			return a.GPUInstanceID - b.GPUInstanceID
		}
		return a.ComputeInstanceID - b.ComputeInstanceID
	})
	return m
}
