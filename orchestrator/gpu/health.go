package gpu

import (
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// deviceHealth decides whether a GPU may be given out. It uses only cheap
// point queries, so it can run at every Devices call:
//
//   - any basic query (name, memory) that failed: the GPU is lost, needs a
//     reset or the driver is in trouble (ERROR_GPU_IS_LOST and friends);
//   - HBM row remapping (Ampere and later): a remap that failed means
//     uncorrectable memory errors with no spare rows left, and a pending
//     remap takes effect only after a GPU reset. In both cases NVIDIA's
//     guidance is to stop scheduling work there until the GPU is reset or
//     serviced, so the GPU is reported unhealthy and drained naturally.
//
// XID errors arrive only through an NVML event set (a blocking watcher, as
// in k8s-device-plugin); that belongs to a separate watcher, not here.
// Readings a driver or mock does not support are not a fault.
func deviceHealth(dev nvml.Device, problems []string) (string, string) {
	type remap struct{ pending, failed bool }
	r, ret := call1(func() (remap, nvml.Return) {
		_, _, pending, failed, ret := dev.GetRemappedRows()
		return remap{pending, failed}, ret
	})
	if ret == nvml.SUCCESS {
		if r.failed {
			problems = append(problems, "row remapping failed: uncorrectable memory errors, GPU needs service")
		} else if r.pending {
			problems = append(problems, "row remapping pending: GPU reset required")
		}
	}
	if len(problems) > 0 {
		return HealthUnhealthy, strings.Join(problems, "; ")
	}
	return HealthOK, ""
}
