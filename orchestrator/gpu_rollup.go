package orchestrator

import (
	"context"
	"time"

	"workbench/models"
	"workbench/orchestrator/gpu"
)

// DefaultGPURollupRetention is how long per-minute GPU rollups are kept.
const DefaultGPURollupRetention = 35 * 24 * time.Hour

// RollupGPUMinutes writes the per-minute rollup of every complete minute
// the sampler's history holds since the last rollup (the current minute
// waits until it is over), then prunes rows older than the retention. The
// in-memory history covers an hour at the default interval, so a rollup
// every minute or so loses nothing; after a restart, what the history no
// longer holds is simply absent.
func (m *Manager) RollupGPUMinutes(ctx context.Context) {
	s := m.pool.sampler
	if s == nil {
		return
	}
	now := m.now()
	upTo := now.Truncate(time.Minute)
	gpus, err := m.pool.List(ctx)
	if err != nil {
		m.log.Warn("GPU rollup: list GPUs", "err", err)
		return
	}
	m.rollupMu.Lock()
	defer m.rollupMu.Unlock()
	var rows []models.GPUMinute
	var units []models.GPUUnitMinute
	for _, g := range gpus {
		hist := s.History(g.UUID)
		rows = append(rows, rollupMinutes(g.UUID, g.Model, m.holders.at(g.UUID, g.WorkbenchID), hist, m.rolledUpTo, upTo)...)
		units = append(units, rollupUnitMinutes(g.UUID, g.Model, m.unitHist.ticks(g.UUID), m.rolledUpTo, upTo)...)
	}
	if err := m.store.SaveGPURollup(ctx, rows, units); err != nil {
		m.log.Warn("GPU rollup: save", "err", err)
		return
	}
	m.rolledUpTo = upTo
	retention := m.opt.GPURollupRetention
	if retention <= 0 {
		retention = DefaultGPURollupRetention
	}
	if _, err := m.store.PruneGPUMinutes(ctx, now.Add(-retention)); err != nil {
		m.log.Warn("GPU rollup: prune", "err", err)
	}
}

// rollupMinutes folds the samples in [from, to) into one row per minute.
// Unread utilisation and power are counted apart, never as zeros. The
// energy drawn between a sample and the one before it (which may lie
// before from) is the sample's minute's (energyBetween). A minute's holder
// is holderAt its last sample.
func rollupMinutes(uuid, model string, holderAt func(time.Time) string, hist []gpu.Sample, from, to time.Time) []models.GPUMinute {
	var out []models.GPUMinute
	for i, smp := range hist {
		if smp.At.Before(from) || !smp.At.Before(to) {
			continue
		}
		minute := smp.At.Truncate(time.Minute).Unix()
		if len(out) == 0 || out[len(out)-1].Minute != minute {
			out = append(out, models.GPUMinute{GPUUUID: uuid, Minute: minute, GPUModel: model})
		}
		r := &out[len(out)-1]
		r.WorkbenchID = holderAt(smp.At)
		if i > 0 {
			if mJ, ok := energyBetween(hist[i-1], smp); ok {
				r.EnergyMJ += mJ
				r.EnergySamples++
			}
		}
		r.Samples++
		if smp.Readable(gpu.FieldUtil) {
			r.UtilSamples++
			r.UtilSum += int64(smp.UtilPercent)
		} else {
			r.UnreadSamples++
		}
		if smp.Readable(gpu.FieldMemory) && int64(smp.MemUsedMiB) > r.MemUsedMaxMiB {
			r.MemUsedMaxMiB = int64(smp.MemUsedMiB)
		}
		if smp.Readable(gpu.FieldPower) {
			r.PowerSamples++
			r.PowerSumMW += int64(smp.PowerMilliW)
		}
	}
	return out
}
