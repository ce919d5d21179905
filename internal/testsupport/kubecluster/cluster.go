package kubecluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Cluster is a running test control plane and the namespace a test works in.
type Cluster struct {
	// Kubeconfig is the path of a kubeconfig file for the cluster's admin
	// (a client certificate in system:masters). Its context names no
	// namespace: use Namespace.
	Kubeconfig string
	// Config is the admin's client configuration.
	Config *rest.Config
	// Client is the admin's clientset.
	Client kubernetes.Interface
	// Namespace is this test's own namespace, workbench-test-<random>.
	Namespace string

	cp *controlPlane
}

// controlPlane is the set of processes behind one or more Clusters.
type controlPlane struct {
	dir   string
	caPEM []byte
	procs []*process // in start order
}

// startTimeout bounds the wait for the whole control plane. Generous: on a
// busy 2-core machine the apiserver alone has needed most of a minute.
const startTimeout = 4 * time.Minute

// Start runs a control plane of its own for the test (etcd, kube-apiserver,
// kube-scheduler, kube-controller-manager, kwok, all in t.TempDir() on free
// ports), waits until every part answers ready, creates the test's
// namespace and stops everything in t.Cleanup. It fails the test, naming
// scripts/k8s-test-tools.sh, when the tools are not built.
func Start(t testing.TB) *Cluster {
	t.Helper()
	began := time.Now()
	c, _, err := startRetrying(func() (string, error) { return t.TempDir(), nil })
	if c != nil {
		t.Cleanup(func() {
			if t.Failed() {
				c.cp.logTails(t)
			}
			c.cp.stop(c.Client)
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	c.Namespace = c.newNamespace(t, false)
	t.Logf("kubecluster: control plane ready in %s at %s (logs in %s)", time.Since(began).Round(time.Millisecond), c.Config.Host, c.cp.dir)
	return c
}

// start brings up the control plane in dir. On error the returned Cluster,
// when not nil, holds what did start, for the caller to stop.
func start(dir string) (*Cluster, error) {
	tools, err := toolPaths(ToolsDir())
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()

	p, err := newPKI()
	if err != nil {
		return nil, err
	}
	if err := p.writeFiles(dir); err != nil {
		return nil, err
	}
	ports := map[string]int{}
	for _, name := range []string{"etcd", "etcd-peer", "apiserver", "scheduler", "controller-manager", "kwok"} {
		if ports[name], err = componentPort(name); err != nil {
			return nil, err
		}
	}

	host := "https://" + hostPort(ports["apiserver"])
	c := &Cluster{
		Kubeconfig: filepath.Join(dir, "admin.kubeconfig"),
		Config: &rest.Config{
			Host: host,
			TLSClientConfig: rest.TLSClientConfig{
				CAData: p.caPEM, CertData: p.adminPEM, KeyData: p.adminKey,
			},
			// Tests launch tens of pods at once; client-go's default of 5
			// requests a second would make them wait on the client.
			QPS: 100, Burst: 200,
		},
		cp: &controlPlane{dir: dir, caPEM: p.caPEM},
	}
	if err := writeKubeconfig(c.Kubeconfig, host, p); err != nil {
		return c, err
	}
	if c.Client, err = kubernetes.NewForConfig(c.Config); err != nil {
		return c, err
	}
	file := func(name string) string { return filepath.Join(dir, name) }
	run := func(name, bin string, args []string, env ...string) error {
		pr, err := startProcess(dir, name, tools[bin], args, env...)
		if err != nil {
			return err
		}
		c.cp.procs = append(c.cp.procs, pr)
		return nil
	}

	etcdURL := "http://" + hostPort(ports["etcd"])
	peerURL := "http://" + hostPort(ports["etcd-peer"])
	if err := os.Mkdir(file("etcd"), 0o700); err != nil {
		return c, err
	}
	if err := run("etcd", "etcd", []string{
		"--name=kubecluster", "--data-dir=" + file("etcd"),
		"--listen-client-urls=" + etcdURL, "--advertise-client-urls=" + etcdURL,
		"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=kubecluster=" + peerURL,
		// The data is thrown away with the test; fsync would only make a
		// busy disk slower.
		"--unsafe-no-fsync", "--log-level=warn",
	}); err != nil {
		return c, err
	}
	if err := run("kube-apiserver", "kube-apiserver", []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(ports["apiserver"]),
		"--tls-cert-file=" + file("serving.crt"), "--tls-private-key-file=" + file("serving.key"),
		"--client-ca-file=" + file("ca.crt"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + file("sa.pub"),
		"--service-account-signing-key-file=" + file("sa.key"),
		"--service-cluster-ip-range=" + serviceRange,
		"--cert-dir=" + file("apiserver-certs"),
		"--profiling=false",
		// The "kubernetes" Service's endpoint would be 127.0.0.1, which
		// the reconciler refuses; nothing here reaches the apiserver
		// through the Service.
		"--endpoint-reconciler-type=none",
	}); err != nil {
		return c, err
	}
	if err := c.cp.waitFor(ctx, "etcd /health", func(ctx context.Context) error {
		return httpOK(ctx, etcdURL+"/health", `"health":"true"`)
	}); err != nil {
		return c, err
	}
	if err := c.cp.waitFor(ctx, "kube-apiserver /readyz", func(ctx context.Context) error {
		_, err := c.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err
	}); err != nil {
		return c, err
	}

	// The rest need the apiserver: the controller-manager gives up when it
	// does not answer within seconds.
	if err := run("kube-scheduler", "kube-scheduler", []string{
		"--kubeconfig=" + c.Kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(ports["scheduler"]),
		"--cert-dir=" + file("scheduler-certs"),
	}); err != nil {
		return c, err
	}
	// The controller-manager makes it a cluster rather than an API: the
	// "default" ServiceAccount in every namespace (pods need it), namespace
	// deletion, garbage collection, and PersistentVolumeClaims bound to
	// hostPath volumes it provisions (the default StorageClass below), so a
	// pod with a claim gets scheduled.
	if err := run("kube-controller-manager", "kube-controller-manager", []string{
		"--kubeconfig=" + c.Kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(ports["controller-manager"]),
		"--cert-dir=" + file("controller-manager-certs"),
		"--service-account-private-key-file=" + file("sa.key"),
		"--root-ca-file=" + file("ca.crt"),
		"--enable-hostpath-provisioner=true",
	}); err != nil {
		return c, err
	}
	if err := os.WriteFile(file("kwok.yaml"), kwokStages, 0o600); err != nil {
		return c, err
	}
	if err := run("kwok", "kwok", []string{
		"--kubeconfig=" + c.Kubeconfig,
		"--config=" + file("kwok.yaml"),
		// Only the nodes AddGPUNodes makes, marked the way kwok's docs do.
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake",
		"--node-lease-duration-seconds=40",
		"--cidr=10.244.0.0/16", "--node-ip=127.0.0.1",
		"--server-address=" + hostPort(ports["kwok"]),
	}, "HOME="+dir); err != nil { // kwok also reads ~/.kwok/kwok.yaml
		return c, err
	}

	if err := createStorageClass(ctx, c.Client); err != nil {
		return c, err
	}
	checks := []struct {
		what string
		url  string
	}{
		{"kube-scheduler /readyz", "https://" + hostPort(ports["scheduler"]) + "/readyz"},
		{"kube-controller-manager /healthz", "https://" + hostPort(ports["controller-manager"]) + "/healthz"},
		{"kwok /healthz", "http://" + hostPort(ports["kwok"]) + "/healthz"},
	}
	for _, ch := range checks {
		if err := c.cp.waitFor(ctx, ch.what, func(ctx context.Context) error { return httpOK(ctx, ch.url, "ok") }); err != nil {
			return c, err
		}
	}
	return c, nil
}

// writeKubeconfig writes the admin's kubeconfig, credentials embedded.
func writeKubeconfig(path, host string, p *pki) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kubecluster"] = &clientcmdapi.Cluster{Server: host, CertificateAuthorityData: p.caPEM}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: p.adminPEM, ClientKeyData: p.adminKey}
	cfg.Contexts["kubecluster"] = &clientcmdapi.Context{Cluster: "kubecluster", AuthInfo: "admin"}
	cfg.CurrentContext = "kubecluster"
	return clientcmd.WriteToFile(*cfg, path)
}

// newNamespace creates workbench-test-<random> and waits for its "default"
// ServiceAccount (made by the controller-manager; pods are refused without
// it). On a shared control plane the namespace is deleted when the test
// ends, which deletes its pods too; a cluster of its own is simply stopped.
func (c *Cluster) newNamespace(t testing.TB, deleteAfter bool) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "workbench-test-" + hex.EncodeToString(b)
	_, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubecluster: create namespace %s: %v", name, err)
	}
	if deleteAfter {
		t.Cleanup(func() {
			_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	}
	err = c.cp.waitFor(ctx, "ServiceAccount default in "+name, func(ctx context.Context) error {
		_, err := c.Client.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("kubecluster: %v", err)
	}
	return name
}

// waitFor polls check until it succeeds, ctx ends, or a component exits
// (then the error carries the end of its log).
func (cp *controlPlane) waitFor(ctx context.Context, what string, check func(context.Context) error) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		last := check(cctx)
		cancel()
		if last == nil {
			return nil
		}
		for _, p := range cp.procs {
			if err := p.alive(); err != nil {
				return fmt.Errorf("kubecluster: waiting for %s: %w", what, err)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kubecluster: %s not ready: %v (last error: %v); logs in %s", what, ctx.Err(), last, cp.dir)
		case <-tick.C:
		}
	}
}

// stop kills every component, newest first, and removes the hostPath
// directories the controller-manager provisioned under /tmp/hostpath_pv
// (its provisioner does not let the directory be chosen).
func (cp *controlPlane) stop(client kubernetes.Interface) {
	if client != nil && len(cp.procs) > 1 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if pvs, err := client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{}); err == nil {
			for _, pv := range pvs.Items {
				if hp := pv.Spec.HostPath; hp != nil && strings.HasPrefix(hp.Path, "/tmp/hostpath_pv/") {
					_ = os.RemoveAll(hp.Path)
				}
			}
		}
		cancel()
	}
	for i := len(cp.procs) - 1; i >= 0; i-- {
		cp.procs[i].stop()
	}
}

// logTails writes the end of every component's log to the test log.
func (cp *controlPlane) logTails(t testing.TB) {
	for _, p := range cp.procs {
		t.Logf("kubecluster: the end of %s's log (%s):\n%s", p.name, p.log, p.tail(25))
	}
}

// ignoreExists turns AlreadyExists into success.
func ignoreExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}
