package orchestrator

import (
	"context"
	goruntime "runtime"
)

// hostCPUer is a runtime that knows the host's CPU count (the Docker
// engine does). An optional interface, so test runtimes need not.
type hostCPUer interface {
	HostCPUs(ctx context.Context) int
}

// HostCPUs is how many CPU cores a workbench can get on this server: the
// engine's count, else (engine unreachable, or a runtime that cannot tell)
// the portal's own machine's, which is the same host in the supported
// single-server deployment.
func (m *Manager) HostCPUs(ctx context.Context) int {
	if h, ok := m.rt.(hostCPUer); ok {
		if n := h.HostCPUs(ctx); n > 0 {
			return n
		}
	}
	return goruntime.NumCPU()
}
