package web

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"workbench/orchestrator/runtime/kube"
)

// newKubeRuntime connects to the cluster WORKBENCH_KUBECONFIG names (else
// the in-cluster ServiceAccount) and builds the Kubernetes runtime. It
// does not contact the API server; Ping does.
func newKubeRuntime(cfg Config, log *slog.Logger) (*kube.Runtime, error) {
	var rc *rest.Config
	var err error
	if cfg.Kube.Kubeconfig != "" {
		rc, err = clientcmd.BuildConfigFromFlags("", cfg.Kube.Kubeconfig)
	} else {
		rc, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("Kubernetes client config (WORKBENCH_KUBECONFIG=%q): %w", cfg.Kube.Kubeconfig, err)
	}
	// Forty launches at once make a few hundred calls: client-go's default
	// of 5 per second would queue them for a minute.
	rc.QPS, rc.Burst = 50, 100
	cli, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("Kubernetes client: %w", err)
	}
	// The NetworkPolicy lets in the portal's Pods from the portal's own
	// namespace, which may differ from the workbenches'.
	portalNS := cfg.Kube.Namespace
	if b, err := os.ReadFile(inClusterNamespace); err == nil && len(b) > 0 {
		portalNS = strings.TrimSpace(string(b))
	}
	return kube.New(cli, rc, kube.Config{Namespace: cfg.Kube.Namespace, StorageClass: cfg.Kube.StorageClass,
		NodeLabels: cfg.Kube.NodeLabels, PortalNamespace: portalNS, Endpoint: cfg.Kube.Endpoint, Log: log})
}
