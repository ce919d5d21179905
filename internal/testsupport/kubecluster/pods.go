package kubecluster

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// exitCodeAnnotation asks kwok's pod-finish stage (kwok-stages.yaml) to end
// a Running pod's containers with this exit code.
const exitCodeAnnotation = "kubecluster.workbench.test/exit-code"

// FinishPod ends pod name (in c.Namespace) as if its containers exited
// with exitCode: terminated with that code and a finishedAt time, startedAt
// kept, phase Succeeded for 0 and Failed otherwise, whatever the pod's
// restartPolicy. kwok does it for a pod on one of its nodes (once the pod
// is Running); a pod on no node gets the same status written directly.
// It returns when the pod's status shows it.
func (c *Cluster) FinishPod(t testing.TB, name string, exitCode int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pods := c.Client.CoreV1().Pods(c.Namespace)
	pod, err := pods.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("kubecluster: FinishPod: %v", err)
	}
	if c.onKwokNode(ctx, pod) {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, exitCodeAnnotation, strconv.Itoa(exitCode))
		if _, err := pods.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatalf("kubecluster: FinishPod: %v", err)
		}
	} else if err := finishDirectly(ctx, c, pod, exitCode); err != nil {
		t.Fatalf("kubecluster: FinishPod: %v", err)
	}
	err = c.cp.waitFor(ctx, "pod "+name+" to finish", func(ctx context.Context) error {
		pod, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed {
			return fmt.Errorf("pod %s is %s", name, pod.Status.Phase)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// FailPod ends pod name's containers with exit code 1 (phase Failed).
func (c *Cluster) FailPod(t testing.TB, name string) {
	t.Helper()
	c.FinishPod(t, name, 1)
}

// onKwokNode says whether the pod is bound to a node kwok manages.
func (c *Cluster) onKwokNode(ctx context.Context, pod *corev1.Pod) bool {
	if pod.Spec.NodeName == "" {
		return false
	}
	node, err := c.Client.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{})
	return err == nil && node.Annotations[kwokNodeAnnotation] == "fake"
}

// finishDirectly writes the finished status itself, for a pod no kwok
// node runs.
func finishDirectly(ctx context.Context, c *Cluster, pod *corev1.Pod, exitCode int) error {
	now := metav1.Now()
	phase, reason := corev1.PodSucceeded, "Completed"
	if exitCode != 0 {
		phase, reason = corev1.PodFailed, "Error"
	}
	started := map[string]metav1.Time{}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.State.Running != nil {
			started[cs.Name] = cs.State.Running.StartedAt
		}
	}
	var statuses []corev1.ContainerStatus
	for _, ctr := range pod.Spec.Containers {
		s, ok := started[ctr.Name]
		if !ok {
			s = now
		}
		statuses = append(statuses, corev1.ContainerStatus{
			Name: ctr.Name, Image: ctr.Image,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: int32(exitCode), Reason: reason, StartedAt: s, FinishedAt: now,
			}},
		})
	}
	pod.Status.Phase = phase
	pod.Status.ContainerStatuses = statuses
	_, err := c.Client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	return err
}
