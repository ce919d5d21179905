package kube

import (
	"context"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"workbench/orchestrator/runtime"
)

// The orchestrator's install lease (orchestrator/lease.go: one portal
// reconciles an install) is made of "volumes" it creates, inspects and
// removes every few seconds. On Kubernetes those would be claims, each
// provisioning storage; they are coordination.k8s.io Leases instead, the
// API's own object for exactly this, with the same create-once semantics.

// leasePrefix starts the names of the orchestrator's lease volumes.
const leasePrefix = "wb-lease-"

func isLease(name string) bool { return strings.HasPrefix(name, leasePrefix) }

func (r *Runtime) createLease(ctx context.Context, name string, labels map[string]string) (runtime.VolumeInfo, error) {
	l := &coordinationv1.Lease{ObjectMeta: r.objectMeta(name, "lease", labels)}
	api := r.cli.CoordinationV1().Leases(r.cfg.Namespace)
	got, err := api.Create(ctx, l, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return r.inspectLease(ctx, name)
	}
	if err != nil {
		return runtime.VolumeInfo{}, apiErr("create lease "+l.Name, err)
	}
	return leaseInfo(got), nil
}

func (r *Runtime) inspectLease(ctx context.Context, name string) (runtime.VolumeInfo, error) {
	got, err := r.cli.CoordinationV1().Leases(r.cfg.Namespace).Get(ctx, objectName(name), metav1.GetOptions{})
	if err != nil {
		return runtime.VolumeInfo{}, apiErr("read lease "+name, err)
	}
	return leaseInfo(got), nil
}

func (r *Runtime) removeLease(ctx context.Context, name string) error {
	err := r.cli.CoordinationV1().Leases(r.cfg.Namespace).Delete(ctx, objectName(name), metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return apiErr("delete lease "+name, err)
}

func leaseInfo(l *coordinationv1.Lease) runtime.VolumeInfo {
	name := l.Annotations[annName]
	if name == "" {
		name = l.Name
	}
	return runtime.VolumeInfo{Name: name, Labels: portalLabels(l.ObjectMeta), CreatedAt: l.CreationTimestamp.UTC()}
}
