package kubecluster

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestMissingToolsNameTheScript: without the tools, the failure says what
// to run.
func TestMissingToolsNameTheScript(t *testing.T) {
	dir := t.TempDir()
	_, err := toolPaths(dir)
	if err == nil || !strings.Contains(err.Error(), "scripts/k8s-test-tools.sh") || !strings.Contains(err.Error(), "kube-apiserver") {
		t.Fatalf("toolPaths(empty dir) = %v, want an error naming the missing tools and scripts/k8s-test-tools.sh", err)
	}
	t.Setenv("WORKBENCH_K8S_TOOLS", dir)
	if ToolsDir() != dir {
		t.Fatalf("ToolsDir() = %q, want $WORKBENCH_K8S_TOOLS %q", ToolsDir(), dir)
	}
}

// TestClusterSmoke runs the whole control plane: GPU nodes from kwok, a pod
// asking for two GPUs scheduled and Running with a start time, finished and
// failed on request with finishedAt, a claim bound by the controller-manager,
// and RBAC refusing a ServiceAccount with no Role.
func TestClusterSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Kubernetes control plane")
	}
	began := time.Now()
	c := Start(t)
	t.Logf("Start took %s", time.Since(began).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	began = time.Now()
	c.AddGPUNodes(t, "gpu", 3, 8, "NVIDIA H100 80GB HBM3", nil)
	c.AddGPUNodes(t, "mig", 1, 0, "NVIDIA A100-SXM4-40GB", map[string]int{"nvidia.com/mig-1g.5gb": 7})
	t.Logf("AddGPUNodes took %s", time.Since(began).Round(time.Millisecond))
	node, err := c.Client.CoreV1().Nodes().Get(ctx, "gpu-2", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := node.Labels["nvidia.com/gpu.product"]; got != "NVIDIA-H100-80GB-HBM3" {
		t.Errorf("gpu.product label = %q", got)
	}
	if got := node.Labels["nvidia.com/gpu.memory"]; got != "81920" {
		t.Errorf("gpu.memory label = %q, want 81920", got)
	}
	mig, err := c.Client.CoreV1().Nodes().Get(ctx, "mig-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if q := mig.Status.Allocatable["nvidia.com/mig-1g.5gb"]; q.Value() != 7 {
		t.Errorf("mig-0 allocatable nvidia.com/mig-1g.5gb = %s, want 7", q.String())
	}

	pods := c.Client.CoreV1().Pods(c.Namespace)
	for _, name := range []string{"ok", "bad"} {
		_, err := pods.Create(ctx, gpuPod(name, 2), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	var started metav1.Time
	for _, name := range []string{"ok", "bad"} {
		p := waitPod(t, c, name, func(p *corev1.Pod) bool {
			return p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == 1 &&
				p.Status.ContainerStatuses[0].State.Running != nil
		})
		if !strings.HasPrefix(p.Spec.NodeName, "gpu-") {
			t.Errorf("pod %s went to node %q, want one with nvidia.com/gpu", name, p.Spec.NodeName)
		}
		if name == "ok" {
			started = p.Status.ContainerStatuses[0].State.Running.StartedAt
		}
		if p.Status.ContainerStatuses[0].State.Running.StartedAt.IsZero() {
			t.Errorf("pod %s Running without startedAt", name)
		}
	}

	c.FinishPod(t, "ok", 0)
	p := waitPod(t, c, "ok", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	term := p.Status.ContainerStatuses[0].State.Terminated
	if term == nil || term.ExitCode != 0 || term.FinishedAt.IsZero() || !term.StartedAt.Equal(&started) {
		t.Errorf("finished pod's container state = %+v, want terminated, exit 0, finishedAt set, startedAt %s", term, started)
	}
	c.FailPod(t, "bad")
	p = waitPod(t, c, "bad", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if term := p.Status.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 1 || term.FinishedAt.IsZero() {
		t.Errorf("failed pod's container state = %+v, want terminated with exit 1 and finishedAt", term)
	}

	// A pod asking for more GPUs than any node has stays Pending with the
	// scheduler's reason.
	if _, err := pods.Create(ctx, gpuPod("huge", 9), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, c, "huge", func(p *corev1.Pod) bool {
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && strings.Contains(cond.Message, "nvidia.com/gpu") {
				return true
			}
		}
		return false
	})

	// The controller-manager provisions and binds claims.
	_, err = c.Client.CoreV1().PersistentVolumeClaims(c.Namespace).Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "home"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = c.cp.waitFor(ctx, "claim home Bound", func(ctx context.Context) error {
		pvc, err := c.Client.CoreV1().PersistentVolumeClaims(c.Namespace).Get(ctx, "home", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pvc.Status.Phase != corev1.ClaimBound {
			return fmt.Errorf("claim is %s", pvc.Status.Phase)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// RBAC: a ServiceAccount with no Role may not list pods; granted a Role
	// that allows it, it may.
	nobody := c.ClientAs(t, "nobody")
	if _, err := nobody.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("listing pods as a ServiceAccount with no Role: err = %v, want Forbidden", err)
	}
	grantPodReader(t, c, "reader")
	reader := c.ClientAs(t, "reader")
	err = c.cp.waitFor(ctx, "reader may list pods", func(ctx context.Context) error {
		_, err := reader.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := reader.CoreV1().Pods(c.Namespace).Delete(ctx, "ok", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("deleting a pod as a reader: err = %v, want Forbidden", err)
	}

	if data, err := os.ReadFile(c.Kubeconfig); err != nil || !strings.Contains(string(data), c.Config.Host) {
		t.Errorf("kubeconfig %s does not name %s (%v)", c.Kubeconfig, c.Config.Host, err)
	}
}

// TestSharedNamespaces: two callers of Shared get one control plane and
// namespaces of their own.
func TestSharedNamespaces(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Kubernetes control plane")
	}
	began := time.Now()
	a := Shared(t)
	t.Logf("first Shared took %s", time.Since(began).Round(time.Millisecond))
	began = time.Now()
	b := Shared(t)
	t.Logf("second Shared took %s", time.Since(began).Round(time.Millisecond))
	if a.Config.Host != b.Config.Host {
		t.Errorf("Shared started two control planes: %s and %s", a.Config.Host, b.Config.Host)
	}
	if a.Namespace == b.Namespace {
		t.Errorf("both callers got namespace %s", a.Namespace)
	}
}

func gpuPod(name string, gpus int64) *corev1.Pod {
	no := false
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyNever,
			AutomountServiceAccountToken: &no,
			Containers: []corev1.Container{{
				Name: "jupyter", Image: "workbench/fake-jupyter:test",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
					corev1.ResourceCPU:    resource.MustParse("2"),
					corev1.ResourceMemory: resource.MustParse("8Gi"),
					"nvidia.com/gpu":      *resource.NewQuantity(gpus, resource.DecimalSI),
				}},
			}},
		},
	}
}

// waitPod waits until ok holds for pod name and returns it.
func waitPod(t *testing.T, c *Cluster, name string, ok func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var pod *corev1.Pod
	err := c.cp.waitFor(ctx, "pod "+name, func(ctx context.Context) error {
		p, err := c.Client.CoreV1().Pods(c.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		pod = p
		if !ok(p) {
			return fmt.Errorf("pod %s: phase %s, node %q, conditions %v", name, p.Status.Phase, p.Spec.NodeName, p.Status.Conditions)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

// grantPodReader makes ServiceAccount sa, with a Role to get and list pods.
func grantPodReader(t *testing.T, c *Cluster, sa string) {
	t.Helper()
	ctx := context.Background()
	rbac := c.Client.RbacV1()
	_, err := rbac.Roles(c.Namespace).Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = rbac.RoleBindings(c.Namespace).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-reader-" + sa},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "pod-reader"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: c.Namespace}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}
