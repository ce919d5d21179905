package runtime

import "context"

// HostCPUs is the host's CPU count as the engine reports it (0: unknown).
func (d *Docker) HostCPUs(ctx context.Context) int { return d.hostCPUs(ctx) }

// HostMemoryBytes is the host's memory as the engine reports it (0:
// unknown).
func (d *Docker) HostMemoryBytes(ctx context.Context) int64 {
	d.hostCPUs(ctx)
	d.ncpuMu.Lock()
	defer d.ncpuMu.Unlock()
	return d.memTotal
}
