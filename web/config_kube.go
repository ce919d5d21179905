package web

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"

	"workbench/orchestrator/runtime"
)

// Container runtimes WORKBENCH_RUNTIME chooses between.
const (
	RuntimeDocker     = "docker"
	RuntimeKubernetes = "kubernetes"
)

// KubeConfig is the Kubernetes runtime's part of Config (docs/kubernetes.md).
type KubeConfig struct {
	// Runtime is "docker" (default) or "kubernetes".
	Runtime string
	// Kubeconfig is a kubeconfig file; "" uses the in-cluster config
	// (the ServiceAccount deploy/kubernetes gives the portal's Pod).
	Kubeconfig string
	// Namespace holds the workbench Pods, home claims and policies.
	Namespace string
	// StorageClass of the home claims; "" is the cluster's default.
	StorageClass string
	// NodeSelector ("key=value,…") limits workbenches, and the GPU pool,
	// to the nodes with those labels; NodeLabels is it parsed.
	NodeSelector string
	NodeLabels   map[string]string
	// Endpoint, when set, replaces where the portal reaches a workbench's
	// Jupyter (not a flag: kwok Pods serve nothing, so a test points the
	// readiness check and the proxy at a fake Jupyter of its own).
	Endpoint func(info runtime.ContainerInfo, network string) (string, int)
}

// bindKubeFlags declares the runtime flags.
func (c *Config) bindKubeFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Kube.Runtime, "runtime", env("RUNTIME", RuntimeDocker), "where workbenches run: docker | kubernetes (WORKBENCH_RUNTIME)")
	fs.StringVar(&c.Kube.Kubeconfig, "kubeconfig", env("KUBECONFIG", ""), "kubernetes runtime: kubeconfig file; empty: the in-cluster ServiceAccount (WORKBENCH_KUBECONFIG)")
	fs.StringVar(&c.Kube.Namespace, "k8s-namespace", env("K8S_NAMESPACE", ""), "kubernetes runtime: namespace of the workbench pods; empty: the portal's own namespace (WORKBENCH_K8S_NAMESPACE)")
	fs.StringVar(&c.Kube.NodeSelector, "k8s-node-selector", env("K8S_NODE_SELECTOR", ""), "kubernetes runtime: only nodes with these labels run workbenches and count in the GPU pool, e.g. workbench=gpu; empty: every node (WORKBENCH_K8S_NODE_SELECTOR)")
	fs.StringVar(&c.Kube.StorageClass, "k8s-storage-class", env("K8S_STORAGE_CLASS", ""), "kubernetes runtime: storage class of the home volume claims; empty: the cluster's default (WORKBENCH_K8S_STORAGE_CLASS)")
}

// inClusterNamespace is where a Pod's ServiceAccount namespace is mounted.
const inClusterNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

var dnsLabelRe = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// validateKube checks the runtime settings and says what to do.
func (c *Config) validateKube() error {
	k := &c.Kube
	switch k.Runtime {
	case "", RuntimeDocker:
		k.Runtime = RuntimeDocker
		return nil
	case RuntimeKubernetes:
	default:
		return fmt.Errorf("invalid WORKBENCH_RUNTIME / --runtime %q: want docker or kubernetes", k.Runtime)
	}
	if c.GPUs != "" && c.GPUs != "auto" {
		return fmt.Errorf("invalid WORKBENCH_GPUS %q with WORKBENCH_RUNTIME=kubernetes: the GPU pool comes from the cluster's nodes; unset WORKBENCH_GPUS", c.GPUs)
	}
	if k.Kubeconfig != "" {
		if _, err := os.Stat(k.Kubeconfig); err != nil {
			return fmt.Errorf("invalid WORKBENCH_KUBECONFIG / --kubeconfig %q: %v (give a readable kubeconfig file, or leave it empty inside the cluster)", k.Kubeconfig, err)
		}
	} else if os.Getenv("KUBERNETES_SERVICE_HOST") == "" {
		return fmt.Errorf("WORKBENCH_RUNTIME=kubernetes needs WORKBENCH_KUBECONFIG (a kubeconfig file) when the portal does not run in the cluster")
	}
	if k.Namespace == "" {
		if b, err := os.ReadFile(inClusterNamespace); err == nil {
			k.Namespace = string(b)
		}
	}
	if k.Namespace == "" {
		return fmt.Errorf("WORKBENCH_RUNTIME=kubernetes needs WORKBENCH_K8S_NAMESPACE (the namespace of the workbench pods)")
	}
	if !dnsLabelRe.MatchString(k.Namespace) {
		return fmt.Errorf("invalid WORKBENCH_K8S_NAMESPACE / --k8s-namespace %q: want a namespace name such as workbench", k.Namespace)
	}
	if k.StorageClass != "" && !dnsSubdomainRe.MatchString(k.StorageClass) {
		return fmt.Errorf("invalid WORKBENCH_K8S_STORAGE_CLASS / --k8s-storage-class %q: want a storage class name (kubectl get storageclass)", k.StorageClass)
	}
	k.NodeLabels = nil
	for _, kv := range strings.FieldsFunc(k.NodeSelector, func(r rune) bool { return r == ',' }) {
		key, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || key == "" || !labelKeyRe.MatchString(key) || !labelValueRe.MatchString(v) {
			return fmt.Errorf("invalid WORKBENCH_K8S_NODE_SELECTOR / --k8s-node-selector %q: want key=value pairs separated by commas, e.g. workbench=gpu", k.NodeSelector)
		}
		if k.NodeLabels == nil {
			k.NodeLabels = map[string]string{}
		}
		k.NodeLabels[key] = v
	}
	return nil
}

var (
	labelKeyRe   = regexp.MustCompile(`^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`)
	labelValueRe = regexp.MustCompile(`^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$`)
)

var dnsSubdomainRe = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)
