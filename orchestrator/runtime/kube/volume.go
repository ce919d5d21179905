package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"workbench/orchestrator/runtime"
)

// A home "volume" is a PersistentVolumeClaim of the configured storage
// class. Stopping or deleting a workbench deletes its Pod, never the
// claim: the home outlives both, as the Docker volume does.

func (r *Runtime) pvcFor(name string, labels map[string]string) (*corev1.PersistentVolumeClaim, error) {
	size, err := resource.ParseQuantity(r.cfg.HomeSize)
	if err != nil {
		return nil, fmt.Errorf("home size %q: %v", r.cfg.HomeSize, err)
	}
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: r.objectMeta(name, roleHome, labels),
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
		}}
	if r.cfg.StorageClass != "" {
		pvc.Spec.StorageClassName = new(r.cfg.StorageClass)
	}
	return pvc, nil
}

// EnsureVolume creates the home claim unless it exists.
func (r *Runtime) EnsureVolume(ctx context.Context, name string, labels map[string]string) (bool, error) {
	pvc, err := r.pvcFor(name, labels)
	if err != nil {
		return false, err
	}
	_, err = r.cli.CoreV1().PersistentVolumeClaims(r.cfg.Namespace).Create(ctx, pvc, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return false, nil
	}
	if err != nil {
		return false, apiErr("create home claim "+pvc.Name, err)
	}
	return true, nil
}

// CreateVolume creates the claim or returns the existing one untouched
// (its labels are the first creator's: a lock, as on Docker).
func (r *Runtime) CreateVolume(ctx context.Context, name string, labels map[string]string) (runtime.VolumeInfo, error) {
	if isLease(name) {
		return r.createLease(ctx, name, labels)
	}
	pvc, err := r.pvcFor(name, labels)
	if err != nil {
		return runtime.VolumeInfo{}, err
	}
	got, err := r.cli.CoreV1().PersistentVolumeClaims(r.cfg.Namespace).Create(ctx, pvc, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return r.InspectVolume(ctx, name)
	}
	if err != nil {
		return runtime.VolumeInfo{}, apiErr("create claim "+pvc.Name, err)
	}
	return volumeInfo(got), nil
}

// InspectVolume returns ErrNotFound when the claim does not exist.
func (r *Runtime) InspectVolume(ctx context.Context, name string) (runtime.VolumeInfo, error) {
	if isLease(name) {
		return r.inspectLease(ctx, name)
	}
	got, err := r.cli.CoreV1().PersistentVolumeClaims(r.cfg.Namespace).Get(ctx, objectName(name), metav1.GetOptions{})
	if err != nil {
		return runtime.VolumeInfo{}, apiErr("inspect claim "+name, err)
	}
	return volumeInfo(got), nil
}

func volumeInfo(p *corev1.PersistentVolumeClaim) runtime.VolumeInfo {
	name := p.Annotations[annName]
	if name == "" {
		name = p.Name
	}
	return runtime.VolumeInfo{Name: name, Labels: portalLabels(p.ObjectMeta), CreatedAt: p.CreationTimestamp.UTC()}
}

// RemoveVolume deletes a claim no live Pod mounts (ErrConflict otherwise,
// as the engine refuses a volume in use); a missing one is fine.
func (r *Runtime) RemoveVolume(ctx context.Context, name string) error {
	if isLease(name) {
		return r.removeLease(ctx, name)
	}
	claim := objectName(name)
	pods, err := r.cli.CoreV1().Pods(r.cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: labelManaged + "=" + managedBy})
	if err != nil {
		return apiErr("list pods", err)
	}
	for _, p := range pods.Items {
		if terminal(&p) {
			continue
		}
		for _, v := range p.Spec.Volumes {
			if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim {
				return fmt.Errorf("home claim %s is in use by pod %s: %w", claim, p.Name, runtime.ErrConflict)
			}
		}
	}
	err = r.cli.CoreV1().PersistentVolumeClaims(r.cfg.Namespace).Delete(ctx, claim, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return apiErr("delete claim "+claim, err)
}

// VolumeSizes reports each home claim's provisioned capacity: Kubernetes
// does not tell a claim's used bytes without reaching into each kubelet,
// and a lab pays its storage for what is provisioned. A claim not bound
// yet reports its request.
func (r *Runtime) VolumeSizes(ctx context.Context, installID string) ([]runtime.VolumeUsage, error) {
	l, err := r.cli.CoreV1().PersistentVolumeClaims(r.cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: installSelector(installID, roleHome)})
	if err != nil {
		return nil, apiErr("list claims", err)
	}
	var out []runtime.VolumeUsage
	for i := range l.Items {
		p := &l.Items[i]
		vi := volumeInfo(p)
		if vi.Labels[runtime.LabelInstall] != installID {
			continue
		}
		q, ok := p.Status.Capacity[corev1.ResourceStorage]
		if !ok {
			q = p.Spec.Resources.Requests[corev1.ResourceStorage]
		}
		out = append(out, runtime.VolumeUsage{Name: vi.Name, Labels: vi.Labels, Bytes: q.Value(), CreatedAt: vi.CreatedAt})
	}
	return out, nil
}
