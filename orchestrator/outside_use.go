package orchestrator

import (
	"sort"

	"workbench/models"
	"workbench/orchestrator/gpu"
)

// A GPU the portal counts as free can be busy all the same: a job started
// on the host by hand, a container run with `docker run --gpus`, a process
// left behind. NVML lists every compute process on a GPU; on a whole GPU
// that no workbench holds, each one is used outside the portal. The pool
// page and API show them (PoolGPU.Outside), and a launch is given such a
// GPU only when no other free one is left (preferUnused).
//
// Only GPUs without a holder are judged: a held GPU's processes are its
// workbench's (tracing them to containers needs the host's /proc, which a
// portal in its own PID namespace does not see; GPUUse does it where it
// can), and MIG instances and slices have their own figures.

// OutsideProcess is a compute process on a GPU no workbench holds: its
// host PID and the GPU memory it takes.
type OutsideProcess struct {
	PID        uint32 `json:"pid"`
	UsedMemMiB uint64 `json:"used_memory_mib"`
}

// outsideProcesses are g's compute processes when g is a whole GPU no
// workbench holds (nil otherwise, or when they could not be read). A GPU a
// container the portal does not know holds (PoolGPU.Unknown) is said so
// already: its processes are that container's.
func outsideProcesses(g PoolGPU, s gpu.Sample) []OutsideProcess {
	if g.WorkbenchID != "" || g.Unknown != nil || g.MIGEnabled || g.SharedSlices > 0 || !s.Readable(gpu.FieldProcesses) || len(s.Processes) == 0 {
		return nil
	}
	out := make([]OutsideProcess, len(s.Processes))
	for i, p := range s.Processes {
		out[i] = OutsideProcess{PID: p.PID, UsedMemMiB: p.UsedMemMiB}
	}
	return out
}

// withProcesses is the set of GPUs (by UUID) with compute processes on
// them in the latest sample: read once per inventory read, for every
// flavor's need.
func (p *Pool) withProcesses(devs []gpu.Device) map[string]bool {
	if p.sampler == nil {
		return nil
	}
	var used map[string]bool
	for _, d := range devs {
		if s, ok := p.sampler.Latest(d.UUID); ok && s.Readable(gpu.FieldProcesses) && len(s.Processes) > 0 {
			if used == nil {
				used = map[string]bool{}
			}
			used[d.UUID] = true
		}
	}
	return used
}

// preferUnused orders a whole-GPU need's candidates so that GPUs in used
// (withProcesses) come last: the store binds candidates in order, so a
// launch gets an unused GPU while there is one. (A free GPU's processes are
// outside ones; a held GPU is skipped by the store whatever its place.)
func preferUnused(need *models.GPUNeed, used map[string]bool) {
	if len(used) == 0 || need.Kind != models.UnitGPU || len(need.Candidates) < 2 {
		return
	}
	need.Candidates = append([]string(nil), need.Candidates...)
	sort.SliceStable(need.Candidates, func(i, j int) bool { return !used[need.Candidates[i]] && used[need.Candidates[j]] })
}
