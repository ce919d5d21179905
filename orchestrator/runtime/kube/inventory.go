package kube

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"workbench/orchestrator/gpu"
)

// GPU Feature Discovery's node labels.
const (
	labelGFDProduct = "nvidia.com/gpu.product"
	labelGFDMemory  = "nvidia.com/gpu.memory" // MiB
)

// Inventory is the GPU pool read from the cluster's nodes: one Device per
// nvidia.com/gpu a node advertises, and one MIG "device" per node that
// advertises MIG resources, its instances the node's allocatable ones.
// The model comes from GFD's labels. It has no telemetry (Sample returns
// nothing): utilisation on Kubernetes is DCGM exporter's business.
type Inventory struct {
	r *Runtime
}

var _ gpu.Inventory = (*Inventory)(nil)

// Inventory returns the GPU pool of the cluster this runtime drives.
func (r *Runtime) Inventory() *Inventory { return &Inventory{r: r} }

// Devices lists the GPUs of every node, grouped by node (sorted by name):
// the pool page lists them in this order.
func (inv *Inventory) Devices(ctx context.Context) ([]gpu.Device, error) {
	nodes, err := inv.r.poolNodes(ctx)
	if err != nil {
		return nil, apiErr("list nodes", err)
	}
	out := []gpu.Device{}
	for _, n := range nodes {
		nr := nodeGPUs(n, inv.r.cfg.SharedResource)
		model := n.Labels[labelGFDProduct]
		if model == "" {
			model = "NVIDIA GPU"
		}
		mem, _ := strconv.ParseUint(n.Labels[labelGFDMemory], 10, 64)
		health, detail := nodeHealth(n)
		for i := 0; i < nr.whole; i++ {
			out = append(out, gpu.Device{Index: len(out), UUID: gpuUnitID(n.Name, i), Model: model, MemoryMiB: mem,
				Health: health, HealthDetail: detail})
		}
		if len(nr.mig) > 0 {
			d := gpu.Device{Index: len(out), UUID: n.Name + ":mig", Model: model, MemoryMiB: mem, MIGEnabled: true,
				Health: health, HealthDetail: detail}
			for _, p := range sortedKeys(nr.mig) {
				for i := 0; i < nr.mig[p]; i++ {
					d.MIG = append(d.MIG, gpu.MIGInstance{UUID: migUnitID(n.Name, p, i), Profile: p,
						MemoryMiB: migMemory(p), GPUInstanceID: len(d.MIG), ComputeInstanceID: 0})
				}
			}
			out = append(out, d)
		}
	}
	return out, nil
}

// nodeHealth: a node that is not Ready, or cordoned, gives no GPU.
func nodeHealth(n *corev1.Node) (string, string) {
	if n.Spec.Unschedulable {
		return gpu.HealthUnhealthy, "node " + n.Name + " is cordoned"
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
			return gpu.HealthUnhealthy, fmt.Sprintf("node %s is not ready: %s", n.Name, c.Message)
		}
	}
	return gpu.HealthOK, ""
}

// migMemory reads the memory out of a profile name ("1g.10gb" → 10 GiB).
func migMemory(profile string) uint64 {
	var g, gb uint64
	if _, err := fmt.Sscanf(profile, "%dg.%dgb", &g, &gb); err != nil {
		return 0
	}
	return gb * 1024
}

// Sample has nothing to read: no NVML here.
func (inv *Inventory) Sample(ctx context.Context) ([]gpu.Sample, error) {
	return []gpu.Sample{}, ctx.Err()
}

// Simulated is false: kwok nodes in tests are simulated, but the portal
// treats the cluster's resources as real (it asks for them in the Pod).
func (inv *Inventory) Simulated() bool { return false }

// Backend names the backend.
func (inv *Inventory) Backend() string { return "kubernetes" }

// Status is the line the pool page shows.
func (inv *Inventory) Status() string {
	devs, err := inv.Devices(context.Background())
	if err != nil {
		return reasonf("Kubernetes nodes: %s", err.Error())
	}
	nodes := map[string]bool{}
	for _, d := range devs {
		node, _, _ := strings.Cut(d.UUID, ":")
		nodes[node] = true
	}
	return reasonf("Kubernetes (namespace %s): %d GPU devices on %d nodes", inv.r.cfg.Namespace, len(devs), len(nodes))
}

// reasonf words a text people read: its format is a key of the reasons
// catalog, which the pages translate (templates/i18n.Reason). Like gpu's,
// a twin of models.Reasonf, which this runtime does not import.
func reasonf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// Close does nothing: the runtime owns the watch.
func (inv *Inventory) Close() error { return nil }
