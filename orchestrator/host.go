package orchestrator

import (
	"context"
	goruntime "runtime"

	"workbench/models"
)

// hostCPUer is a runtime that knows the host's CPU count (the Docker
// engine does). An optional interface, so test runtimes need not.
type hostCPUer interface {
	HostCPUs(ctx context.Context) int
}

// hostMemer is a runtime that knows the host's memory (the Docker engine
// does). Optional, like hostCPUer.
type hostMemer interface {
	HostMemoryBytes(ctx context.Context) int64
}

// The server a simulated pool stands for (mock:dgx…): a DGX-class machine,
// 224 CPU threads and 2 TiB of memory. Its flavors are checked against it,
// so the seeded flavors of a demo or test portal on a small machine can be
// launched; its containers get at most the real host's CPUs (realCPUs).
const (
	simulatedHostCPUs        = 224
	simulatedHostMemoryBytes = 2 << 40
)

// HostCPUs is how many CPU cores a workbench can get on this server: the
// engine's count, else (engine unreachable, or a runtime that cannot tell)
// the portal's own machine's, which is the same host in the supported
// single-server deployment. A simulated pool's is the simulated server's.
func (m *Manager) HostCPUs(ctx context.Context) int {
	if m.pool.Simulated() {
		return simulatedHostCPUs
	}
	return m.realCPUs(ctx)
}

// realCPUs is the real host's CPU count (see HostCPUs).
func (m *Manager) realCPUs(ctx context.Context) int {
	if h, ok := m.rt.(hostCPUer); ok {
		if n := h.HostCPUs(ctx); n > 0 || m.pool.OnKubernetes() {
			// On Kubernetes the portal's own machine is not where Pods run:
			// no node (or no answer) is "unknown", never the portal's CPUs.
			return n
		}
	}
	return goruntime.NumCPU()
}

// HostMemoryBytes is this server's memory (0: unknown): the engine's, or
// the simulated server's.
func (m *Manager) HostMemoryBytes(ctx context.Context) int64 {
	if m.pool.Simulated() {
		return simulatedHostMemoryBytes
	}
	if h, ok := m.rt.(hostMemer); ok {
		return h.HostMemoryBytes(ctx)
	}
	return 0
}

// ExceedsHost says why a flavor cannot run on this server at all ("needs
// 64 CPUs; this server has 16"), or "" when it fits. A launch or start of
// such a flavor is refused (never capped while billed for what it asked),
// and the launch form disables it with this reason.
func (m *Manager) ExceedsHost(ctx context.Context, fl *models.Flavor) string {
	kube := m.pool.OnKubernetes() // "this server" is the largest node there
	if n := m.HostCPUs(ctx); n > 0 && fl.CPUMilli > models.Millicores(n)*1000 {
		if kube {
			return reasonf("needs %s CPUs; the largest Kubernetes node has %d", fl.CPUMilli, n)
		}
		return reasonf("needs %s CPUs; this server has %d", fl.CPUMilli, n)
	}
	if mem := m.HostMemoryBytes(ctx); mem > 0 && fl.MemoryMiB<<20 > mem {
		if kube {
			return reasonf("needs %s GiB of memory; the largest Kubernetes node has %s GiB", models.FormatMemoryGiB(fl.MemoryMiB), models.FormatMemoryGiB(mem>>20))
		}
		return reasonf("needs %s GiB of memory; this server has %s GiB", models.FormatMemoryGiB(fl.MemoryMiB), models.FormatMemoryGiB(mem>>20))
	}
	return ""
}

// exceedsHost is ExceedsHost as the launch's (or start's) error.
func (m *Manager) exceedsHost(ctx context.Context, fl *models.Flavor) error {
	if why := m.ExceedsHost(ctx, fl); why != "" {
		return &models.ValidationError{Field: "flavor", Message: reasonf("flavor %s %s: choose a smaller flavor, or ask an admin to resize it", fl.Name, why)}
	}
	return nil
}

// fitSimulated gives a simulated pool's container at most the real host's
// CPUs: the engine cannot give more than it has, and the simulated server
// is larger than the machine it runs on.
func (m *Manager) fitSimulated(ctx context.Context, nano int64) int64 {
	if !m.pool.Simulated() {
		return nano
	}
	if max := int64(m.realCPUs(ctx)) * 1e9; max > 0 && nano > max {
		return max
	}
	return nano
}
