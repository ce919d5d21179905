package kube_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"workbench/models"
	"workbench/orchestrator"
	"workbench/orchestrator/runtime"
)

// TestKubeConcurrentLaunchesNeverOvercommit: 40 one-GPU launches at once
// on 3 nodes × 8 GPUs. The portal's pool (one unit per node GPU) decides
// in its transaction: 24 are accepted and all run, each node with at most
// 8 GPUs of Pods, and 16 are refused for capacity.
func TestKubeConcurrentLaunchesNeverOvercommit(t *testing.T) {
	r := newKubeRig(t, 3, 8)
	var mu sync.Mutex
	var accepted []string
	refused := 0
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			wb, err := r.m.Launch(r.ctx, r.user, orchestrator.LaunchRequest{Name: fmt.Sprintf("c%02d", i), Image: "kwok", Flavor: r.flavor.Name})
			mu.Lock()
			defer mu.Unlock()
			var re *orchestrator.RefusedError
			switch {
			case err == nil:
				accepted = append(accepted, wb.ID)
			case errors.As(err, &re) && re.Code == "no_capacity":
				refused++
			default:
				t.Errorf("launch %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if len(accepted) != 24 || refused != 16 {
		t.Fatalf("%d accepted, %d refused; want 24 and 16", len(accepted), refused)
	}
	for _, id := range accepted {
		r.waitState(id, models.StateRunning)
	}
	pods, err := r.c.Client.CoreV1().Pods(r.c.Namespace).List(r.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	perNode := map[string]int64{}
	running := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning {
			running++
		}
		q := p.Spec.Containers[0].Resources.Limits["nvidia.com/gpu"]
		perNode[p.Spec.NodeName] += q.Value()
	}
	if running != 24 || len(pods.Items) != 24 {
		t.Fatalf("%d pods, %d running; want 24 running", len(pods.Items), running)
	}
	for node, n := range perNode {
		if node == "" || n > 8 {
			t.Errorf("node %q holds %d GPUs of pods", node, n)
		}
	}
}

// TestKubePendingPodShowsSchedulerReason: when no node fits the Pod (here
// a Pod the portal does not know holds the node's GPUs), the workbench
// waits with the scheduler's reason on its page, and runs once a node
// frees up.
func TestKubePendingPodShowsSchedulerReason(t *testing.T) {
	r := newKubeRig(t, 1, 2)
	hog := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "gpu-hog", Namespace: r.c.Namespace},
		Spec: corev1.PodSpec{NodeSelector: r.pool, Containers: []corev1.Container{{Name: "hog", Image: "hog",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("2")}}}}}}
	if _, err := r.c.Client.CoreV1().Pods(r.c.Namespace).Create(r.ctx, hog, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r.eventually(time.Minute, "the hog to hold the node's GPUs", func() bool {
		p, err := r.c.Client.CoreV1().Pods(r.c.Namespace).Get(r.ctx, "gpu-hog", metav1.GetOptions{})
		return err == nil && p.Spec.NodeName != ""
	})
	wb := r.launch("pending")
	r.eventually(2*time.Minute, "the scheduler's reason on the workbench", func() bool {
		got, err := r.store.WorkbenchByID(r.ctx, wb.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State == models.StateFailed {
			t.Fatalf("failed: %s", got.Reason)
		}
		return got.State == models.StateStarting && strings.HasPrefix(got.Reason, orchestrator.PendingReasonPrefix) &&
			strings.Contains(got.Reason, "Insufficient nvidia.com/gpu")
	})
	if err := r.c.Client.CoreV1().Pods(r.c.Namespace).Delete(r.ctx, "gpu-hog", metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))}); err != nil {
		t.Fatal(err)
	}
	r.waitState(wb.ID, models.StateRunning)
}

// TestKubeFinishedPodClosesIntervalAtFinishedAt: a Pod whose container
// ends (kwok finishes it with a finishedAt) stops the workbench through
// the watch, and its usage interval ends at the container's finishedAt.
func TestKubeFinishedPodClosesIntervalAtFinishedAt(t *testing.T) {
	r := newKubeRig(t, 1, 8)
	wb := r.waitState(r.launch("finish").ID, models.StateRunning)
	r.c.FinishPod(t, wb.ContainerID, 3)
	pod, err := r.pod(wb)
	if err != nil {
		t.Fatal(err)
	}
	finished := pod.Status.ContainerStatuses[0].State.Terminated.FinishedAt.UTC()
	r.eventually(time.Minute, "the workbench to stop", func() bool {
		got, err := r.store.WorkbenchByID(r.ctx, wb.ID)
		if err != nil {
			t.Fatal(err)
		}
		return !got.Active()
	})
	ivs, err := r.store.IntervalsOf(r.ctx, wb.ID)
	if err != nil || len(ivs) != 1 || ivs[0].EndedAt == nil {
		t.Fatalf("intervals %+v (%v); want one, closed", ivs, err)
	}
	if !ivs[0].EndedAt.Equal(finished) {
		t.Fatalf("interval ended at %s; the pod finished at %s", ivs[0].EndedAt, finished)
	}
	started := pod.Status.ContainerStatuses[0].State.Terminated.StartedAt.UTC()
	if !ivs[0].StartedAt.Equal(started) {
		t.Errorf("interval started at %s; the container started at %s", ivs[0].StartedAt, started)
	}
}

// TestKubeRestartAdoptsPods: a portal that restarts (new runtime, new
// manager, same data) adopts its running Pods: nothing is stopped or
// recreated, and the workbench stays running.
func TestKubeRestartAdoptsPods(t *testing.T) {
	r := newKubeRig(t, 1, 8)
	wb := r.waitState(r.launch("adopt").ID, models.StateRunning)
	before, err := r.pod(wb)
	if err != nil {
		t.Fatal(err)
	}
	r.stopPortal()
	r.startPortal(r.c.Client, r.c.Config)
	if err := r.m.Reconcile(r.ctx); err != nil {
		t.Fatal(err)
	}
	list, err := r.rt.List(r.ctx, r.installID)
	if err != nil || len(list) != 1 || !list[0].Running || list[0].Labels[runtime.LabelID] != wb.ID {
		t.Fatalf("list after restart: %+v (%v)", list, err)
	}
	got, err := r.store.WorkbenchByID(r.ctx, wb.ID)
	if err != nil || got.State != models.StateRunning || got.ContainerID != before.Name {
		t.Fatalf("after restart: %+v (%v)", got, err)
	}
	after, err := r.pod(wb)
	if err != nil || after.UID != before.UID {
		t.Fatalf("pod after restart: %v, same object %v", err, err == nil && after.UID == before.UID)
	}
	iv, err := r.store.OpenIntervalOf(r.ctx, wb.ID)
	if err != nil || !iv.StartedAt.Equal(before.Status.ContainerStatuses[0].State.Running.StartedAt.UTC()) {
		t.Fatalf("open interval %+v (%v), want it from the container's startedAt", iv, err)
	}
}
