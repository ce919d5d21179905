package web

import (
	"fmt"
	"log/slog"

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
	return kube.New(cli, rc, kube.Config{Namespace: cfg.Kube.Namespace, StorageClass: cfg.Kube.StorageClass,
		PortalNamespace: cfg.Kube.Namespace, Log: log})
}
