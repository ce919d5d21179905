package kube

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"workbench/orchestrator/runtime"
)

// tombstone is a Pod that Stop deleted: Inspect still reports it exited
// (with its finish time), Start recreates it from its spec, Remove
// forgets it. Tombstones live in this process only; after a portal restart
// a stopped workbench's Pod is simply gone, and the manager creates a new
// one when it starts (as it does for a removed Docker container).
type tombstone struct {
	pod  *corev1.Pod
	info runtime.ContainerInfo
	logs string // the last lines, read before the delete
}

// Create makes the Pod behind its scheduling gate: it exists, holds no
// node resources and runs nothing until Start.
func (r *Runtime) Create(ctx context.Context, spec runtime.Spec) (string, error) {
	pod, err := r.podFor(spec)
	if err != nil {
		return "", err
	}
	created, err := r.cli.CoreV1().Pods(r.cfg.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return "", apiErr("create pod "+pod.Name, err)
	}
	r.forget(created.Name)
	return created.Name, nil
}

// Start lifts the scheduling gate of a created Pod, or recreates a
// stopped one (a Pod cannot be restarted in place).
func (r *Runtime) Start(ctx context.Context, id string) error {
	name := objectName(id)
	pods := r.cli.CoreV1().Pods(r.cfg.Namespace)
	pod, err := pods.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		r.mu.Lock()
		ts, ok := r.tombstones[name]
		r.mu.Unlock()
		if !ok {
			return apiErr("start pod "+name, err)
		}
		return r.recreate(ctx, ts.pod)
	case err != nil:
		return apiErr("start pod "+name, err)
	case pod.DeletionTimestamp != nil || terminal(pod):
		// Exited (or on its way out): replace it by a fresh copy.
		if err := r.deleteAndWait(ctx, name, 0); err != nil {
			return err
		}
		return r.recreate(ctx, pod)
	case len(pod.Spec.SchedulingGates) == 0:
		return nil // already started
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		p.Spec.SchedulingGates = nil
		_, err = pods.Update(ctx, p, metav1.UpdateOptions{})
		return err
	})
	return apiErr("start pod "+name, err)
}

// recreate creates a Pod again from an old one's spec, without its gate
// and node.
func (r *Runtime) recreate(ctx context.Context, old *corev1.Pod) error {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: old.Name, Namespace: old.Namespace,
		Labels: old.Labels, Annotations: old.Annotations}, Spec: *old.Spec.DeepCopy()}
	p.Spec.NodeName = ""
	p.Spec.SchedulingGates = nil
	if _, err := r.cli.CoreV1().Pods(r.cfg.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		return apiErr("recreate pod "+p.Name, err)
	}
	r.forget(p.Name)
	return nil
}

// Stop deletes the Pod with grace as its termination grace period (the
// kubelet sends SIGTERM, then SIGKILL) and waits until it is gone. The
// home PVC stays. A Pod already gone is stopped; none known is NotFound.
func (r *Runtime) Stop(ctx context.Context, id string, grace time.Duration) error {
	name := objectName(id)
	pod, err := r.cli.CoreV1().Pods(r.cfg.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if r.hasTombstone(name) {
			return nil
		}
		return apiErr("stop pod "+name, err)
	}
	if err != nil {
		return apiErr("stop pod "+name, err)
	}
	logs := r.tailLogs(ctx, name, 200)
	secs := int64(math.Ceil(grace.Seconds()))
	if err := r.deleteAndWait(ctx, name, secs); err != nil {
		return err
	}
	// The last state seen before the Pod went: its finish time if the
	// kubelet reported one, else now (the Pod is gone, so it has ended).
	last := r.lastSeen(name, pod)
	info := infoFromPod(last)
	if info.Running || info.FinishedAt.IsZero() {
		info.FinishedAt = time.Now().UTC()
	}
	info.Running, info.State, info.IPs = false, "exited", map[string]string{}
	r.mu.Lock()
	r.tombstones[name] = tombstone{pod: last, info: info, logs: logs}
	r.mu.Unlock()
	return nil
}

// Remove deletes the Pod at once (as docker rm -f does) and forgets its
// tombstone. Already gone is fine.
func (r *Runtime) Remove(ctx context.Context, id string) error {
	name := objectName(id)
	r.forget(name)
	err := r.deleteAndWait(ctx, name, 0)
	if errors.Is(err, runtime.ErrNotFound) {
		return nil
	}
	return err
}

// deleteAndWait deletes a Pod with a grace period (0: at once) and waits
// until the API server no longer has it: a name is reused by the next
// Create, and a stopped workbench's GPUs must be free when Stop returns.
func (r *Runtime) deleteAndWait(ctx context.Context, name string, graceSecs int64) error {
	pods := r.cli.CoreV1().Pods(r.cfg.Namespace)
	err := pods.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &graceSecs})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return apiErr("delete pod "+name, err)
	}
	// The kubelet takes the grace period, then reports; allow a minute on
	// top for a busy node.
	err = waitFor(ctx, time.Duration(graceSecs)*time.Second+time.Minute, func() (bool, error) {
		_, err := pods.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		return apiErr(fmt.Sprintf("wait for pod %s to go", name), err)
	}
	return nil
}

// Inspect reads the Pod's state; a stopped one's tombstone.
func (r *Runtime) Inspect(ctx context.Context, id string) (runtime.ContainerInfo, error) {
	name := objectName(id)
	pod, err := r.cli.CoreV1().Pods(r.cfg.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		r.mu.Lock()
		ts, ok := r.tombstones[name]
		r.mu.Unlock()
		if ok {
			return copyInfo(ts.info), nil
		}
	}
	if err != nil {
		return runtime.ContainerInfo{}, apiErr("inspect pod "+name, err)
	}
	return infoFromPod(pod), nil
}

// List returns the install's Pods and tombstones.
func (r *Runtime) List(ctx context.Context, installID string) ([]runtime.ContainerInfo, error) {
	l, err := r.cli.CoreV1().Pods(r.cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: installSelector(installID, roleWorkbench)})
	if err != nil {
		return nil, apiErr("list pods", err)
	}
	out := make([]runtime.ContainerInfo, 0, len(l.Items))
	seen := map[string]bool{}
	for i := range l.Items {
		info := infoFromPod(&l.Items[i])
		if info.Labels[runtime.LabelInstall] != installID {
			continue // another install whose id hashes alike
		}
		seen[info.ID] = true
		out = append(out, info)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, ts := range r.tombstones {
		if !seen[name] && ts.info.Labels[runtime.LabelInstall] == installID {
			out = append(out, copyInfo(ts.info))
		}
	}
	return out, nil
}

func (r *Runtime) forget(name string) {
	r.mu.Lock()
	delete(r.tombstones, name)
	r.mu.Unlock()
}

func (r *Runtime) hasTombstone(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.tombstones[name]
	return ok
}

// lastSeen is the latest state of a Pod the watch saw before it went
// (it may carry the container's finish time), else fallback.
func (r *Runtime) lastSeen(name string, fallback *corev1.Pod) *corev1.Pod {
	r.mu.Lock()
	w := r.watch
	r.mu.Unlock()
	if w != nil {
		if p := w.last(name); p != nil {
			return p
		}
	}
	return fallback
}

// terminal: the Pod's container has ended for good (RestartPolicy Never).
func terminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}
