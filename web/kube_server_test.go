package web_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"workbench/internal/testsupport/kubecluster"
	"workbench/web"
)

// TestPortalOnKubernetes: WORKBENCH_RUNTIME=kubernetes with a kubeconfig
// starts the portal on the cluster; its GPU pool is the nodes' GPUs (two
// kwok nodes × 4, listed node by node, the model from GFD's label) and its
// catalog is seeded for that model.
func TestPortalOnKubernetes(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Kubernetes test cluster (skipped with -short)")
	}
	c := kubecluster.Shared(t)
	c.AddGPUNodes(t, "webk", 2, 4, "NVIDIA A100-SXM4-40GB", nil)
	for i := range 2 {
		patch := `{"metadata":{"labels":{"workbench.test/pool":"webk"}}}`
		if _, err := c.Client.CoreV1().Nodes().Patch(t.Context(), "webk-"+strconv.Itoa(i), types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	p := newPortal(t, func(cfg *web.Config) {
		cfg.GPUs = "auto"
		cfg.Kube = web.KubeConfig{Runtime: web.RuntimeKubernetes, Kubeconfig: c.Kubeconfig, Namespace: c.Namespace, NodeSelector: "workbench.test/pool=webk"}
	})
	cl := p.client()
	p.login(cl, "admin", adminPassword)
	res, body := p.get(cl, "/api/v1/gpus")
	if res.StatusCode != 200 {
		t.Fatalf("GET /api/v1/gpus: %d %s", res.StatusCode, body)
	}
	var pool struct {
		Items []struct {
			UUID  string `json:"uuid"`
			Model string `json:"model"`
			State string `json:"state"`
		} `json:"items"`
		Backend string `json:"backend"`
	}
	if err := json.Unmarshal([]byte(body), &pool); err != nil || pool.Backend != "kubernetes" {
		t.Fatalf("%v: %s", err, body)
	}
	gpus := pool.Items
	if len(gpus) != 8 {
		t.Fatalf("%d GPUs, want 8: %s", len(gpus), body)
	}
	for i, g := range gpus {
		want := "webk-" + strconv.Itoa(i/4) + ":gpu-" + strconv.Itoa(i%4)
		if g.UUID != want || g.Model != "NVIDIA-A100-SXM4-40GB" || g.State != "free" {
			t.Errorf("GPU %d: %+v, want %s, the GFD model, free", i, g, want)
		}
	}
	_, page := p.get(cl, "/workbenches/new")
	if !strings.Contains(page, "A100") {
		t.Errorf("the launch page offers no A100 flavor")
	}
	// The pool page lists the nodes' GPUs.
	if _, page := p.get(cl, "/gpus"); !strings.Contains(page, "webk-1:gpu-3") {
		t.Errorf("the pool page does not list webk-1:gpu-3")
	}
}
