// Package kubecluster runs a real Kubernetes control plane for tests: etcd,
// kube-apiserver (RBAC, ServiceAccount tokens, TLS with certificates made
// here), kube-scheduler, kube-controller-manager and kwok, which plays the
// kubelet for fake GPU nodes (nodes Ready, scheduled pods Running with
// container start times, pods finished or failed on request).
//
// The binaries are built from the Go module proxy by scripts/k8s-test-tools.sh
// into ToolsDir (outside the repository, once per machine); `make test` runs
// the script first. A test calls Start for a cluster of its own, or Shared
// for one cluster per test binary with a namespace of its own (cheaper:
// starting a cluster takes seconds, more on a busy machine).
//
// Every process runs on free ports on 127.0.0.1 with its files in a
// temporary directory, and dies with the test (t.Cleanup) or, for Shared,
// with the test binary.
package kubecluster
