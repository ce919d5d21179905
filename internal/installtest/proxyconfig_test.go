package installtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The README's TLS examples parse: the Caddyfile with `caddy adapt`, the
// nginx snippet with `nginx -t` inside a minimal main configuration (with
// a throwaway certificate where the example names one). .ci/run installs
// both from Debian.
func TestTLSProxyExamplesParse(t *testing.T) {
	root := moduleRoot(t)
	t.Run("caddy", func(t *testing.T) {
		caddy := lookPathOrSkip(t, "caddy")
		out, err := exec.Command(caddy, "adapt", "--adapter", "caddyfile", "--config", filepath.Join(root, "docs", "deploy", "Caddyfile")).CombinedOutput()
		if err != nil || !strings.Contains(string(out), `"reverse_proxy"`) && !strings.Contains(string(out), `"handler":"reverse_proxy"`) {
			t.Fatalf("caddy adapt: %v\n%s", err, out)
		}
	})
	t.Run("nginx", func(t *testing.T) {
		nginx := lookPathOrSkip(t, "nginx")
		dir := t.TempDir()
		cert, key := selfSigned(t, dir)
		b, err := os.ReadFile(filepath.Join(root, "docs", "deploy", "nginx.conf"))
		if err != nil {
			t.Fatal(err)
		}
		conf := strings.NewReplacer("/etc/ssl/workbench/fullchain.pem", cert, "/etc/ssl/workbench/privkey.pem", key).Replace(string(b))
		if conf == string(b) {
			t.Fatal("the nginx example no longer names /etc/ssl/workbench/{fullchain,privkey}.pem: update this test")
		}
		write(t, filepath.Join(dir, "workbench.conf"), conf)
		write(t, filepath.Join(dir, "nginx.conf"), "error_log stderr;\npid "+filepath.Join(dir, "nginx.pid")+";\nevents {}\nhttp { include "+filepath.Join(dir, "workbench.conf")+"; }\n")
		out, err := exec.Command(nginx, "-t", "-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-e", "stderr").CombinedOutput()
		if err != nil {
			t.Fatalf("nginx -t: %v\n%s", err, out)
		}
	})
}

func lookPathOrSkip(t *testing.T, name string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed (.ci/run installs it)", name)
		}
		t.Skipf("%s is not installed (apt-get install %s)", name, name)
	}
	return p
}

func write(t *testing.T, path, s string) {
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func selfSigned(t *testing.T, dir string) (certPath, keyPath string) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gpu.example.org"},
		DNSNames: []string{"gpu.example.org"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(k)
	certPath, keyPath = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	write(t, certPath, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	write(t, keyPath, string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})))
	return certPath, keyPath
}
