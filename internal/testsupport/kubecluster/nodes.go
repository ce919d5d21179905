package kubecluster

import (
	"context"
	_ "embed"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kwokStages is kwok's configuration: how nodes become Ready and keep
// their lease, and how pods on them start, finish and go away.
//
//go:embed kwok-stages.yaml
var kwokStages []byte

// kwokNodeAnnotation marks the nodes kwok manages (with value "fake").
const kwokNodeAnnotation = "kwok.x-k8s.io/node"

// gpuMemory finds the memory in a product name ("NVIDIA H100 80GB HBM3",
// "NVIDIA A100-SXM4-40GB").
var gpuMemory = regexp.MustCompile(`(\d+)\s*GB`)

// AddGPUNodes creates n fake nodes, prefix-0 to prefix-(n-1), that kwok
// manages: allocatable cpu 64, memory 512Gi, pods 110, nvidia.com/gpu gpus
// and every MIG resource in mig (e.g. "nvidia.com/mig-1g.10gb": 7); labelled
// as NVIDIA's GPU Feature Discovery does: nvidia.com/gpu.product (spaces as
// '-'), nvidia.com/gpu.count, nvidia.com/gpu.memory in MiB (from "<N>GB" in
// product; left out when the product names no size) and, with MIG
// resources, nvidia.com/mig.strategy=mixed. It returns once kwok has made
// every node Ready and holds its lease; the nodes are deleted when the test
// ends.
func (c *Cluster) AddGPUNodes(t testing.TB, prefix string, n, gpus int, product string, mig map[string]int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("512Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
		"nvidia.com/gpu":      *resource.NewQuantity(int64(gpus), resource.DecimalSI),
	}
	for name, count := range mig {
		res[corev1.ResourceName(name)] = *resource.NewQuantity(int64(count), resource.DecimalSI)
	}
	labels := map[string]string{
		"type":                   "kwok",
		"kubernetes.io/os":       "linux",
		"kubernetes.io/arch":     "amd64",
		"nvidia.com/gpu.product": strings.ReplaceAll(product, " ", "-"),
		"nvidia.com/gpu.count":   strconv.Itoa(gpus),
	}
	if m := gpuMemory.FindStringSubmatch(product); m != nil {
		gb, _ := strconv.Atoi(m[1])
		labels["nvidia.com/gpu.memory"] = strconv.Itoa(gb * 1024)
	}
	if len(mig) > 0 {
		labels["nvidia.com/mig.strategy"] = "mixed"
	}

	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("%s-%d", prefix, i)
		l := map[string]string{"kubernetes.io/hostname": names[i]}
		for k, v := range labels {
			l[k] = v
		}
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name:        names[i],
				Labels:      l,
				Annotations: map[string]string{kwokNodeAnnotation: "fake"},
			},
			// A node registers with its capacity, as a kubelet does; kwok
			// adds conditions, addresses and node info and keeps these.
			Status: corev1.NodeStatus{Capacity: res.DeepCopy(), Allocatable: res.DeepCopy()},
		}
		if _, err := c.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			t.Fatalf("kubecluster: create node %s: %v", names[i], err)
		}
	}
	t.Cleanup(func() {
		for _, name := range names {
			_ = c.Client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
		}
	})

	for _, name := range names {
		err := c.cp.waitFor(ctx, "node "+name+" Ready with its lease", func(ctx context.Context) error {
			node, err := c.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !nodeReady(node) {
				return fmt.Errorf("node %s is not Ready yet", name)
			}
			// The controller-manager taints a node it saw before it was
			// Ready, and lifts the taint once it is.
			for _, taint := range node.Spec.Taints {
				if strings.HasPrefix(taint.Key, "node.kubernetes.io/") {
					return fmt.Errorf("node %s still has taint %s", name, taint.Key)
				}
			}
			if q := node.Status.Allocatable["nvidia.com/gpu"]; q.Value() != int64(gpus) {
				return fmt.Errorf("node %s has allocatable nvidia.com/gpu %s, want %d", name, q.String(), gpus)
			}
			if _, err := c.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, name, metav1.GetOptions{}); err != nil {
				return err
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func nodeReady(node *corev1.Node) bool {
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}
