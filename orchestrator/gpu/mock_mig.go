package gpu

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// NewMock builds the named go-nvml mock server with stable UUIDs, as mode
// "mock:X" does; PartitionMock can then give it MIG instances.
func NewMock(name string) (nvml.Interface, error) { return newMockServer(name) }

// MockMIGPart is one GPU of a mock partition: its index and the MIG
// instances to make on it, in order.
type MockMIGPart struct {
	Index    int
	Profiles []string // e.g. "1g.10gb", "3g.40gb"
}

// ParseMockMIG reads a mock partition: "7:1g.10gb*7" or
// "6:3g.40gb*2,7:1g.10gb*3+2g.20gb" (GPU index, then profiles with an
// optional count, joined by "+"). Only plain <g>g.<mem>gb profiles.
func ParseMockMIG(spec string) ([]MockMIGPart, error) {
	var out []MockMIGPart
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		idx, list, ok := strings.Cut(part, ":")
		i, err := strconv.Atoi(strings.TrimSpace(idx))
		if !ok || err != nil || i < 0 {
			return nil, fmt.Errorf("%q: want INDEX:PROFILE[*COUNT][+PROFILE…]", part)
		}
		p := MockMIGPart{Index: i}
		for _, item := range strings.Split(list, "+") {
			name, count, hasCount := strings.Cut(strings.TrimSpace(item), "*")
			n := 1
			if hasCount {
				if n, err = strconv.Atoi(count); err != nil || n < 1 || n > 7 {
					return nil, fmt.Errorf("%q: count must be 1–7", item)
				}
			}
			if _, _, err := plainProfile(name); err != nil {
				return nil, err
			}
			for k := 0; k < n; k++ {
				p.Profiles = append(p.Profiles, name)
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// plainProfile splits "3g.40gb" into its slice count and memory in GiB.
func plainProfile(name string) (slices, gib int, err error) {
	g, mem, ok := strings.Cut(name, "g.")
	slices, err1 := strconv.Atoi(g)
	gib, err2 := strconv.Atoi(strings.TrimSuffix(mem, "gb"))
	if !ok || err1 != nil || err2 != nil || !strings.HasSuffix(mem, "gb") || giProfileBySlices[uint32(slices)] == 0 && slices != 1 {
		return 0, 0, fmt.Errorf("MIG profile %q: want <slices>g.<memory>gb, such as 1g.10gb", name)
	}
	return slices, gib, nil
}

// PartitionMock enables MIG and makes the given instances on a go-nvml mock
// server, through the same NVML calls `nvidia-smi mig -cgi … -C` makes. It is
// for simulated pools only (make demo): the portal never partitions real
// GPUs.
func PartitionMock(lib nvml.Interface, parts []MockMIGPart) error {
	for _, p := range parts {
		dev, ret := lib.DeviceGetHandleByIndex(p.Index)
		if ret != nvml.SUCCESS {
			return fmt.Errorf("mock GPU %d: %v", p.Index, ret)
		}
		// The mock does not check capacity; a real GPU has 7 compute slices.
		total := 0
		for _, name := range p.Profiles {
			g, _, _ := plainProfile(name)
			total += g
		}
		if total > 7 {
			return fmt.Errorf("mock GPU %d: %s need %d compute slices, a GPU has 7", p.Index, strings.Join(p.Profiles, "+"), total)
		}
		if r, _ := dev.SetMigMode(nvml.DEVICE_MIG_ENABLE); r != nvml.SUCCESS {
			return fmt.Errorf("mock GPU %d: enable MIG: %v", p.Index, r)
		}
		for _, name := range p.Profiles {
			slices, gib, _ := plainProfile(name)
			giInfo, ret := dev.GetGpuInstanceProfileInfo(giProfileBySlices[uint32(slices)])
			if ret != nvml.SUCCESS || int(giInfo.MemorySizeMB/1024) != gib {
				return fmt.Errorf("mock GPU %d has no MIG profile %s", p.Index, name)
			}
			gi, ret := dev.CreateGpuInstance(&giInfo)
			if ret != nvml.SUCCESS {
				return fmt.Errorf("mock GPU %d: create %s: %v (does it still fit?)", p.Index, name, ret)
			}
			ciInfo, ret := gi.GetComputeInstanceProfileInfo(ciProfileBySlices[uint32(slices)], nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
			if ret != nvml.SUCCESS {
				return fmt.Errorf("mock GPU %d: compute profile of %s: %v", p.Index, name, ret)
			}
			if _, ret := gi.CreateComputeInstance(&ciInfo); ret != nvml.SUCCESS {
				return fmt.Errorf("mock GPU %d: compute instance of %s: %v", p.Index, name, ret)
			}
		}
	}
	return nil
}
