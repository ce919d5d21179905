package web_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"workbench/web"
)

// TestConfigKubernetesRuntime: WORKBENCH_RUNTIME=kubernetes needs a way
// to the cluster and a namespace, and every bad setting says what to do.
func TestConfigKubernetesRuntime(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // not in a cluster here
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := func(k web.KubeConfig, gpus string) web.Config {
		return web.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), GPUs: gpus, Currency: "USD", LogFormat: "text", LogLevel: "info", Kube: k}
	}
	good := web.KubeConfig{Runtime: "kubernetes", Kubeconfig: kubeconfig, Namespace: "workbench", StorageClass: "fast-ssd", NodeSelector: "workbench=gpu, nvidia.com/gpu.present=true"}
	c := cfg(good, "auto")
	if err := c.Validate(); err != nil {
		t.Fatalf("valid kubernetes settings refused: %v", err)
	}
	if c.Kube.NodeLabels["workbench"] != "gpu" || c.Kube.NodeLabels["nvidia.com/gpu.present"] != "true" {
		t.Fatalf("node selector parsed as %v", c.Kube.NodeLabels)
	}
	for _, tc := range []struct {
		edit func(*web.KubeConfig)
		gpus string
		want string
	}{
		{func(k *web.KubeConfig) { k.Runtime = "podman" }, "auto", "want docker or kubernetes"},
		{func(k *web.KubeConfig) {}, "mock:dgxh100", "the GPU pool comes from the cluster's nodes; unset WORKBENCH_GPUS"},
		{func(k *web.KubeConfig) { k.Kubeconfig = "" }, "auto", "needs WORKBENCH_KUBECONFIG"},
		{func(k *web.KubeConfig) { k.Kubeconfig = kubeconfig + ".missing" }, "auto", "give a readable kubeconfig file"},
		{func(k *web.KubeConfig) { k.Namespace = "" }, "auto", "needs WORKBENCH_K8S_NAMESPACE"},
		{func(k *web.KubeConfig) { k.Namespace = "Work_Bench" }, "auto", "want a namespace name"},
		{func(k *web.KubeConfig) { k.StorageClass = "Fast SSD" }, "auto", "kubectl get storageclass"},
		{func(k *web.KubeConfig) { k.NodeSelector = "gpu" }, "auto", "want key=value pairs"},
	} {
		k := good
		tc.edit(&k)
		c := cfg(k, tc.gpus)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v (gpus %s): %v, want an error saying %q", k, tc.gpus, err, tc.want)
		}
	}
	// Docker stays the default.
	c = cfg(web.KubeConfig{}, "none")
	if err := c.Validate(); err != nil || c.Kube.Runtime != web.RuntimeDocker {
		t.Fatalf("default runtime %q (%v)", c.Kube.Runtime, err)
	}
}
