package orchestrator

import (
	"workbench/models"
	"workbench/orchestrator/gpu"
)

// GPU work is activity (with Options.GPUWorkIsActivity, off by default:
// the SPEC's idle rule is proxy traffic and busy kernels, and a GPU that
// works for nobody is what the maximum runtime and the GPU-idle rule are
// for; an admin whose users train from terminals turns it on): a workbench whose GPU units are read at or above
// the sampler's idle threshold (WORKBENCH_GPU_IDLE_THRESHOLD, 5% by
// default) is not idle, whatever the proxy and Jupyter saw. A training
// run started from a terminal with nohup (the terminal closed, no kernel
// busy, no output Jupyter counts) kept its GPUs at 85% while its page said
// "idle 9 min — stops at 06:53 UTC unless used", and the idle timeout
// stopped it. Each collection's busy readings touch the activity tracker
// (written to last_activity_at like proxy traffic), so the culler, the
// pages' deadlines and the stop-soon warning all count them. An
// unreadable reading is no work (a broken sampler must not hold GPUs
// for ever): the idle timeout then goes by the other activity, as before.

// touchGPUWork records the whole GPUs of one collection read busy as
// their holders' activity (held: GPU UUID → workbench id).
func (m *Manager) touchGPUWork(held map[string]string) {
	s := m.pool.sampler
	threshold := s.IdleThreshold()
	for uuid, wbID := range held {
		if smp, ok := s.Latest(uuid); ok && busyReading(smp, threshold) {
			m.activity.touch(wbID, smp.At)
		}
	}
}

// touchUnitWork records the MIG instances and slice holders of one
// collection read busy (each by its own figures, as GPU-idle release
// judges them) as their holders' activity.
func (m *Manager) touchUnitWork(uses []GPUUse, threshold uint32) {
	for _, u := range uses {
		for _, uu := range u.Units {
			if uu.Kind == models.UnitGPU || uu.Holder.WorkbenchID == "" {
				continue // whole GPUs: touchGPUWork
			}
			if busyReading(uu.Sample, threshold) {
				m.activity.touch(uu.Holder.WorkbenchID, uu.Sample.At)
			}
		}
	}
}

// busyReading: a readable utilisation at or above threshold, at a known time.
func busyReading(s gpu.Sample, threshold uint32) bool {
	return s.Readable(gpu.FieldUtil) && s.UtilPercent >= threshold && !s.At.IsZero()
}
