package kube_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"workbench/internal/testsupport/kubecluster"
	"workbench/models"
	"workbench/orchestrator"
	"workbench/orchestrator/runtime"
	"workbench/orchestrator/runtime/kube"
)

// The tests here run the portal's lifecycle manager on a real API server,
// scheduler and kwok nodes (internal/testsupport/kubecluster). kwok runs no
// process: Jupyter is a fake answering /api/status here, and the runtime's
// Endpoint points at it once kwok reports the Pod running.

// gpuModel is what GFD labels the test nodes with (spaces as '-').
const gpuModel = "NVIDIA-H100-80GB-HBM3"

// kubeRig is one portal (store, manager, runtime) on its own namespace
// and its own GPU nodes of the shared test cluster.
type kubeRig struct {
	t         *testing.T
	ctx       context.Context
	c         *kubecluster.Cluster
	pool      map[string]string // node labels of this rig's nodes
	installID string
	store     *models.Store
	rt        *kube.Runtime
	m         *orchestrator.Manager
	stopRun   context.CancelFunc
	user      *models.User
	flavor    *models.Flavor
	jupyter   *httptest.Server
	log       *slog.Logger
}

// newKubeRig starts (or joins) the test cluster with nodes × gpus kwok
// GPU nodes of its own, and a manager running (events, reconciliation).
func newKubeRig(t *testing.T, nodes, gpus int) *kubeRig {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the Kubernetes test cluster (skipped with -short)")
	}
	c := kubecluster.Shared(t)
	prefix := "wb" + randHex(4)
	c.AddGPUNodes(t, prefix, nodes, gpus, "NVIDIA H100 80GB HBM3", nil)
	r := &kubeRig{t: t, ctx: context.Background(), c: c, installID: "kt" + randHex(4),
		pool: map[string]string{"workbench.test/pool": prefix},
		log:  slog.New(slog.NewTextHandler(io.Discard, nil))}
	// Only this rig's nodes count (other tests add theirs to the cluster).
	for i := range nodes {
		patch := `{"metadata":{"labels":{"workbench.test/pool":"` + prefix + `"}}}`
		if _, err := c.Client.CoreV1().Nodes().Patch(r.ctx, prefix+"-"+strconv.Itoa(i), types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	r.jupyter = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasSuffix(req.URL.Path, "/api/status") {
			_, _ = io.WriteString(w, `{"started":"now"}`)
			return
		}
		http.NotFound(w, req)
	}))
	t.Cleanup(r.jupyter.Close)

	var err error
	r.store, err = models.Open(r.ctx, t.TempDir(), r.log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.store.Close() })
	if err := r.store.SeedDefaultPrices(r.ctx, []string{gpuModel}); err != nil {
		t.Fatal(err)
	}
	if err := r.store.SeedCatalog(r.ctx, []string{gpuModel}); err != nil {
		t.Fatal(err)
	}
	img := &models.Image{Name: "kwok", Image: "quay.io/jupyter/base-notebook:kwok",
		StartCommand: "jupyter lab --port={port} --ServerApp.base_url={base_url} --IdentityProvider.token={token}",
		RunAsUser:    "1000", HomePath: "/home/jovyan", Enabled: true}
	if err := r.store.CreateImage(r.ctx, img); err != nil {
		t.Fatal(err)
	}
	if r.user, err = r.store.CreateUser(r.ctx, models.NewUser{Username: "alice_k8s", Password: "alice-password", Role: "user"}); err != nil {
		t.Fatal(err)
	}
	fls, err := r.store.ListFlavors(r.ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	for i := range fls {
		if fls[i].GPUCount == 1 && fls[i].GPUModel == gpuModel {
			r.flavor = &fls[i]
		}
	}
	if r.flavor == nil {
		t.Fatalf("no one-GPU %s flavor seeded in %+v", gpuModel, fls)
	}
	r.startPortal(c.Client, c.Config)
	return r
}

// startPortal builds a runtime and a manager on the rig's store, as a
// portal process does at start, and runs the manager until the test ends
// or stopPortal.
func (r *kubeRig) startPortal(cli kubernetes.Interface, rc *rest.Config) {
	r.t.Helper()
	host, portText, _ := net.SplitHostPort(strings.TrimPrefix(r.jupyter.URL, "http://"))
	port, _ := strconv.Atoi(portText)
	rt, err := kube.New(cli, rc, kube.Config{Namespace: r.c.Namespace, NodeLabels: r.pool, Log: r.log,
		Endpoint: func(info runtime.ContainerInfo, _ string) (string, int) {
			if !info.Running {
				return "", 0
			}
			return host, port
		}})
	if err != nil {
		r.t.Fatal(err)
	}
	r.rt = rt
	r.m = orchestrator.NewManager(r.store, orchestrator.NewPool(rt.Inventory(), nil, r.store), rt, r.installID,
		orchestrator.Options{MinCharge: -1, StopGrace: time.Second, PreemptGrace: 2 * time.Second, ReadyTimeout: 2 * time.Minute, ReconcileEvery: time.Second}, r.log)
	r.m.UseFirewall(rt.Firewall())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.m.Run(ctx) }()
	m := r.m
	r.stopRun = func() {
		cancel()
		<-done
		m.Wait()
		rt.Close()
	}
	r.t.Cleanup(r.stopPortal)
}

// stopPortal ends the manager as a portal shutting down does (its
// workbenches keep running).
func (r *kubeRig) stopPortal() {
	if r.stopRun != nil {
		r.stopRun()
		r.stopRun = nil
	}
}

// launch launches a one-GPU workbench for the rig's user.
func (r *kubeRig) launch(name string) *models.Workbench {
	r.t.Helper()
	wb, err := r.m.Launch(r.ctx, r.user, orchestrator.LaunchRequest{Name: name, Image: "kwok", Flavor: r.flavor.Name})
	if err != nil {
		r.t.Fatalf("launch %s: %v", name, err)
	}
	return wb
}

// waitState waits until the workbench is in state (and fails on failed).
func (r *kubeRig) waitState(id, state string) *models.Workbench {
	r.t.Helper()
	var wb *models.Workbench
	r.eventually(3*time.Minute, "workbench "+id+" "+state, func() bool {
		var err error
		wb, err = r.store.WorkbenchByID(r.ctx, id)
		if err != nil {
			r.t.Fatal(err)
		}
		if wb.State == models.StateFailed && state != models.StateFailed {
			r.t.Fatalf("workbench %s failed: %s", id, wb.Reason)
		}
		return wb.State == state
	})
	return wb
}

// pod reads the workbench's Pod.
func (r *kubeRig) pod(wb *models.Workbench) (*corev1.Pod, error) {
	return r.c.Client.CoreV1().Pods(r.c.Namespace).Get(r.ctx, wb.ContainerID, metav1.GetOptions{})
}

// eventually polls cond every 50 ms until it holds or timeout.
func (r *kubeRig) eventually(timeout time.Duration, what string, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
