package kube

import (
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The GPU pool's unit ids on Kubernetes name a node's share of a resource,
// not a device: "<node>:gpu-<i>" is the i-th nvidia.com/gpu the node
// advertises, "<node>:mig-<profile>-<i>" its i-th MIG instance of that
// profile. The portal binds them one per unit, so it never hands out more
// than the nodes have; the device plugin chooses the actual devices and
// the scheduler the node (docs/kubernetes.md). Colons, not slashes: the
// ids appear in URL paths (/admin/gpus/:uuid/drain).

// unitRef is one unit id, parsed.
type unitRef struct {
	node     string
	resource string // extended resource name
	profile  string // MIG profile, "" for a whole GPU
	index    int
}

func gpuUnitID(node string, i int) string { return node + ":gpu-" + strconv.Itoa(i) }
func migUnitID(node, profile string, i int) string {
	return node + ":mig-" + profile + "-" + strconv.Itoa(i)
}

// parseUnitID reads the ids above.
func parseUnitID(id string) (unitRef, bool) {
	node, rest, ok := strings.Cut(id, ":")
	if !ok || node == "" {
		return unitRef{}, false
	}
	cut := strings.LastIndex(rest, "-")
	if cut < 0 {
		return unitRef{}, false
	}
	i, err := strconv.Atoi(rest[cut+1:])
	if err != nil || i < 0 {
		return unitRef{}, false
	}
	kind := rest[:cut]
	switch {
	case kind == "gpu":
		return unitRef{node: node, resource: ResourceGPU, index: i}, true
	case strings.HasPrefix(kind, "mig-") && len(kind) > 4:
		return unitRef{node: node, resource: ResourceMIGPrefix + kind[4:], profile: kind[4:], index: i}, true
	}
	return unitRef{}, false
}

// nodeResources is what one node advertises for GPUs.
type nodeResources struct {
	name   string
	whole  int            // allocatable nvidia.com/gpu
	mig    map[string]int // profile → allocatable instances
	shared int            // allocatable time-sliced replicas
}

// nodeGPUs reads a node's allocatable GPU resources.
func nodeGPUs(n *corev1.Node, sharedResource string) nodeResources {
	nr := nodeResources{name: n.Name, mig: map[string]int{}}
	for name, q := range n.Status.Allocatable {
		v := int(q.Value())
		switch s := string(name); {
		case s == ResourceGPU:
			nr.whole = v
		case s == sharedResource:
			nr.shared = v
		case strings.HasPrefix(s, ResourceMIGPrefix):
			if v > 0 {
				nr.mig[strings.TrimPrefix(s, ResourceMIGPrefix)] = v
			}
		}
	}
	return nr
}

// units lists every unit id the node gives.
func (nr nodeResources) units() []string {
	var out []string
	for i := 0; i < nr.whole; i++ {
		out = append(out, gpuUnitID(nr.name, i))
	}
	for _, p := range sortedKeys(nr.mig) {
		for i := 0; i < nr.mig[p]; i++ {
			out = append(out, migUnitID(nr.name, p, i))
		}
	}
	return out
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
