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
// workbench holds (nil otherwise, or when they could not be read).
func outsideProcesses(g PoolGPU, s gpu.Sample) []OutsideProcess {
	if g.WorkbenchID != "" || g.MIGEnabled || g.SharedSlices > 0 || !s.Readable(gpu.FieldProcesses) || len(s.Processes) == 0 {
		return nil
	}
	out := make([]OutsideProcess, len(s.Processes))
	for i, p := range s.Processes {
		out[i] = OutsideProcess{PID: p.PID, UsedMemMiB: p.UsedMemMiB}
	}
	return out
}

// preferUnused orders a whole-GPU need's candidates so that GPUs with
// compute processes on them in the latest sample come last: the store
// binds candidates in order, so a launch gets an unused GPU while there
// is one. (A free GPU's processes are outside ones; a held GPU is skipped
// by the store whatever its place.)
func (p *Pool) preferUnused(need *models.GPUNeed) {
	if p.sampler == nil || need.Kind != models.UnitGPU || len(need.Candidates) < 2 {
		return
	}
	used := make(map[string]bool, len(need.Candidates))
	for _, uuid := range need.Candidates {
		if s, ok := p.sampler.Latest(uuid); ok && s.Readable(gpu.FieldProcesses) && len(s.Processes) > 0 {
			used[uuid] = true
		}
	}
	if len(used) == 0 {
		return
	}
	need.Candidates = append([]string(nil), need.Candidates...)
	sort.SliceStable(need.Candidates, func(i, j int) bool { return !used[need.Candidates[i]] && used[need.Candidates[j]] })
}
