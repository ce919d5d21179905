package runtime

import "context"

// HostCPUs is the host's CPU count as the engine reports it (0: unknown).
func (d *Docker) HostCPUs(ctx context.Context) int { return d.hostCPUs(ctx) }
