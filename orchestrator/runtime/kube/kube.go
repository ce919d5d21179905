// Package kube runs workbenches on Kubernetes: it implements runtime.Runtime
// with client-go, so the lifecycle manager, the queue, quotas and billing
// drive Pods exactly as they drive Docker containers (docs/kubernetes.md).
//
// A workbench container is a Pod in one namespace; its id is the Pod's
// name, which stays the same when Start recreates the Pod. Create makes the
// Pod behind a scheduling gate (it holds nothing until Start lifts the
// gate), Stop deletes it with the grace period and keeps a tombstone so
// Inspect still reports the exit, Remove forgets both. The home is a
// PersistentVolumeClaim per user, the "network" a NetworkPolicy.
package kube

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"workbench/orchestrator/runtime"
)

// Resource names of the NVIDIA device plugin.
const (
	// ResourceGPU is a whole GPU.
	ResourceGPU = "nvidia.com/gpu"
	// ResourceMIGPrefix + profile ("1g.10gb") is a MIG instance under the
	// device plugin's "mixed" MIG strategy.
	ResourceMIGPrefix = "nvidia.com/mig-"
	// DefaultSharedResource is a time-sliced replica of a GPU: the device
	// plugin's time-slicing with renameByDefault: true advertises them
	// under this name, apart from whole GPUs.
	DefaultSharedResource = "nvidia.com/gpu.shared"
)

// Config says where and how workbench Pods are made.
type Config struct {
	// Namespace holds every workbench Pod, PVC and NetworkPolicy.
	Namespace string
	// StorageClass of the home PVCs; "" is the cluster's default class.
	StorageClass string
	// HomeSize is the size each home PVC asks for (default 10Gi).
	HomeSize string
	// SharedResource is what a shared-GPU slice asks for (default
	// DefaultSharedResource).
	SharedResource string
	// PortalLabels select the portal's own Pods: the only ones the
	// NetworkPolicy lets reach workbenches (default
	// app.kubernetes.io/name=workbench, as deploy/kubernetes labels it).
	PortalLabels map[string]string
	// NodeLabels, when set, limit workbenches to the nodes carrying all of
	// them: the GPU pool counts only those nodes, and every Pod gets them
	// as its nodeSelector (WORKBENCH_K8S_NODE_SELECTOR).
	NodeLabels map[string]string
	// PortalNamespace is where the portal's Pods run ("" = Namespace).
	PortalNamespace string
	// Endpoint replaces Endpoint's answer (tests: kwok Pods serve nothing,
	// so a test points the manager at its own fake Jupyter).
	Endpoint func(info runtime.ContainerInfo, network string) (string, int)
	Log      *slog.Logger
}

// Runtime is the Kubernetes implementation of runtime.Runtime.
type Runtime struct {
	cli  kubernetes.Interface
	rest *rest.Config // for the exec subresource; nil: WriteHomeFile is unavailable
	cfg  Config
	log  *slog.Logger

	mu         sync.Mutex
	tombstones map[string]tombstone // pod name → the Pod Stop deleted
	watch      *podWatch            // started by the first Events (watch.go)
	nodes      *nodeCache           // allocatable per node (nodes.go)
}

var _ runtime.Runtime = (*Runtime)(nil)

// New builds the runtime over a client. restCfg may be nil (no exec).
func New(cli kubernetes.Interface, restCfg *rest.Config, cfg Config) (*Runtime, error) {
	if cfg.Namespace == "" {
		return nil, errors.New("kubernetes runtime: a namespace is required")
	}
	if cfg.HomeSize == "" {
		cfg.HomeSize = "10Gi"
	}
	if cfg.SharedResource == "" {
		cfg.SharedResource = DefaultSharedResource
	}
	if len(cfg.PortalLabels) == 0 {
		cfg.PortalLabels = map[string]string{"app.kubernetes.io/name": "workbench"}
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	r := &Runtime{cli: cli, rest: restCfg, cfg: cfg, log: cfg.Log.With("component", "kube"),
		tombstones: map[string]tombstone{}}
	r.nodes = newNodeCache(cli)
	return r, nil
}

// Close stops the watches.
func (r *Runtime) Close() error {
	r.mu.Lock()
	w := r.watch
	r.watch = nil
	r.mu.Unlock()
	if w != nil {
		w.stop()
	}
	r.nodes.stop()
	return nil
}

// Ping asks the API server for its version.
func (r *Runtime) Ping(ctx context.Context) error {
	// The discovery client has no context; a list of one namespace's pods
	// with limit 1 answers just as well and honours ctx.
	_, err := r.cli.CoreV1().Pods(r.cfg.Namespace).List(ctx, listOne)
	return apiErr("ping the Kubernetes API server", err)
}

// HasNVIDIA reports whether any node advertises NVIDIA GPU resources
// (the device plugin or the GPU operator is installed).
func (r *Runtime) HasNVIDIA(ctx context.Context) (bool, error) {
	nodes, err := r.poolNodes(ctx)
	if err != nil {
		return false, apiErr("list nodes", err)
	}
	for _, n := range nodes {
		if len(nodeGPUs(n, r.cfg.SharedResource).units()) > 0 {
			return true, nil
		}
	}
	return false, nil
}

// apiErr wraps an API error with op, mapping NotFound, AlreadyExists and
// Conflict and an unreachable server to the runtime's errors.
func apiErr(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%s: %w: %w", op, runtime.ErrNotFound, err)
	case apierrors.IsAlreadyExists(err), apierrors.IsConflict(err):
		return fmt.Errorf("%s: %w: %w", op, runtime.ErrConflict, err)
	case apierrors.IsForbidden(err), apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return fmt.Errorf("%s: %w", op, err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: %w", op, err)
	}
	var se apierrors.APIStatus
	if errors.As(err, &se) && se.Status().Code > 0 && se.Status().Code < 500 {
		return fmt.Errorf("%s: %w", op, err)
	}
	return fmt.Errorf("%s: %w: %w", op, runtime.ErrEngineUnavailable, err)
}

// waitFor polls cond every 50 ms until it is true, fails, or timeout.
func waitFor(ctx context.Context, timeout time.Duration, cond func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		ok, err := cond()
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
