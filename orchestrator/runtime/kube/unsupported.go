package kube

import (
	"context"
	"errors"
	"fmt"
	"io"

	"workbench/orchestrator/runtime"
)

// UnsupportedError is an engine operation that has no Kubernetes meaning.
// It wraps errors.ErrUnsupported; its text tells the user what to do
// instead, and the pages show it as it is.
type UnsupportedError struct {
	Op  string
	Why string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%s is not available on Kubernetes: %s", e.Op, e.Why)
}

func (e *UnsupportedError) Unwrap() error { return errors.ErrUnsupported }

// EnsureImage has nothing to do: the node's kubelet pulls the image when
// the Pod starts (a pull that fails shows as the Pod's waiting reason,
// ErrImagePull, on the workbench's page).
func (r *Runtime) EnsureImage(ctx context.Context, _ string, progress func(pct int, status string)) error {
	if progress != nil {
		progress(100, "the node pulls the image when the pod starts")
	}
	return ctx.Err()
}

// PullImage (the admin's pre-pull) cannot be done from the portal.
func (r *Runtime) PullImage(context.Context, string, func(runtime.PullProgress)) error {
	return &UnsupportedError{Op: "pulling an image ahead", Why: "each node pulls images itself when a pod starts; use a DaemonSet to pre-pull if you need it"}
}

// ImageSize: images live on the nodes, not where the portal can see.
func (r *Runtime) ImageSize(context.Context, string) (bool, int64, error) {
	return false, 0, &UnsupportedError{Op: "reading an image's size", Why: "images live on the nodes; ask the cluster's admin"}
}

// LoadImage: there is no one engine to load an archive into.
func (r *Runtime) LoadImage(context.Context, io.Reader) ([]string, error) {
	return nil, &UnsupportedError{Op: "loading an image archive", Why: "use a registry: push the image there, then add it to the catalog"}
}

// Commit: a Pod's filesystem cannot be saved as an image through the API.
func (r *Runtime) Commit(context.Context, string, runtime.CommitSpec) (runtime.SavedImage, error) {
	return runtime.SavedImage{}, &UnsupportedError{Op: "saving a workbench as an image", Why: "use an image built from a Dockerfile and pushed to a registry instead"}
}

// SavedImages: nothing the portal saved exists on Kubernetes.
func (r *Runtime) SavedImages(context.Context, string) ([]runtime.ImageInfo, error) { return nil, nil }

// RemoveImage: nothing the portal saved exists on Kubernetes.
func (r *Runtime) RemoveImage(context.Context, string) error {
	return &UnsupportedError{Op: "removing an image", Why: "images live on the nodes and in registries; delete them there"}
}

// PrepareHome is done by the Pod itself: its fsGroup makes the home claim
// the user's group's (kubelet chowns it at mount), so nothing runs here.
func (r *Runtime) PrepareHome(ctx context.Context, containerID, _, user string) error {
	if _, _, err := numericUser(user); err != nil {
		return err
	}
	_, err := r.Inspect(ctx, containerID)
	return err
}

// ResolveUser: only numeric users exist on Kubernetes (runAsUser).
func (r *Runtime) ResolveUser(ctx context.Context, containerID, user string) (int, int, error) {
	if _, err := r.Inspect(ctx, containerID); err != nil {
		return 0, 0, err
	}
	return numericUser(user)
}

// ProcessUser is what the Pod's securityContext makes the kubelet run its
// process as.
func (r *Runtime) ProcessUser(ctx context.Context, containerID string) (int, int, error) {
	info, err := r.Inspect(ctx, containerID)
	if err != nil {
		return 0, 0, err
	}
	if !info.Running {
		return 0, 0, fmt.Errorf("pod %s is not running", containerID)
	}
	pod, err := r.pod(ctx, containerID)
	if err != nil {
		return 0, 0, err
	}
	sc := pod.Spec.SecurityContext
	if sc == nil || sc.RunAsUser == nil || sc.RunAsGroup == nil {
		return 0, 0, fmt.Errorf("pod %s sets no user", containerID)
	}
	return int(*sc.RunAsUser), int(*sc.RunAsGroup), nil
}

// HomeOwner needs the node's filesystem.
func (r *Runtime) HomeOwner(context.Context, string, string) (int, int, int64, error) {
	return 0, 0, 0, &UnsupportedError{Op: "reading the home's owner", Why: "the home claim is group-owned by the user's gid (fsGroup)"}
}
