package kubecluster

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ClientAs returns a clientset authenticated as ServiceAccount sa in
// c.Namespace (created when missing) with a token from the TokenRequest
// API, as a pod running as sa would have: what it may do is what RBAC
// grants sa, nothing more.
func (c *Cluster) ClientAs(t testing.TB, sa string) kubernetes.Interface {
	t.Helper()
	client, err := kubernetes.NewForConfig(c.ConfigAs(t, sa))
	if err != nil {
		t.Fatalf("kubecluster: ClientAs %s: %v", sa, err)
	}
	return client
}

// ConfigAs is ClientAs's client configuration, for code that builds its
// own clients (informers, the portal's runtime).
func (c *Cluster) ConfigAs(t testing.TB, sa string) *rest.Config {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := c.Client.CoreV1().ServiceAccounts(c.Namespace).Create(ctx,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
	if err := ignoreExists(err); err != nil {
		t.Fatalf("kubecluster: create ServiceAccount %s: %v", sa, err)
	}
	expiry := int64(24 * time.Hour / time.Second)
	tr, err := c.Client.CoreV1().ServiceAccounts(c.Namespace).CreateToken(ctx, sa,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("kubecluster: token for ServiceAccount %s: %v", sa, err)
	}
	return &rest.Config{
		Host:            c.Config.Host,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.cp.caPEM},
		BearerToken:     tr.Status.Token,
		QPS:             c.Config.QPS, Burst: c.Config.Burst,
	}
}

// KubeconfigAs writes a kubeconfig file for ServiceAccount sa (as
// ConfigAs), its context's namespace c.Namespace, and returns its path:
// for code configured with a kubeconfig path (WORKBENCH_KUBECONFIG).
func (c *Cluster) KubeconfigAs(t testing.TB, sa string) string {
	t.Helper()
	rc := c.ConfigAs(t, sa)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kubecluster"] = &clientcmdapi.Cluster{Server: rc.Host, CertificateAuthorityData: rc.CAData}
	cfg.AuthInfos[sa] = &clientcmdapi.AuthInfo{Token: rc.BearerToken}
	cfg.Contexts["kubecluster"] = &clientcmdapi.Context{Cluster: "kubecluster", AuthInfo: sa, Namespace: c.Namespace}
	cfg.CurrentContext = "kubecluster"
	path := filepath.Join(t.TempDir(), sa+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatalf("kubecluster: %v", err)
	}
	return path
}
