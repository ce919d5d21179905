package runtime

import (
	"strings"
	"testing"
)

// The engine's error chains, as Docker words them, become one sentence that
// names the registry and what to do; the chain is kept as details.
func TestPullErrorWording(t *testing.T) {
	for _, c := range []struct{ ref, raw, want string }{
		{"quay.io/jupyter/pytorch-notebook:cuda12-python-3.11",
			`Error response from daemon: Get "https://quay.io/v2/": dial tcp: lookup quay.io on 127.0.0.53:53: server misbehaving`,
			"this server cannot download from quay.io — ask an admin to pre-pull the image or configure a registry mirror"},
		{"quay.io/jupyter/pytorch-notebook:x",
			`Error response from daemon: Get "https://quay.io/v2/": net/http: request canceled while waiting for connection (Client.Timeout exceeded while awaiting headers)`,
			"this server cannot download from quay.io — ask an admin to pre-pull the image or configure a registry mirror"},
		{"ubuntu:24.04", `Error response from daemon: Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io: no such host`,
			"this server cannot download from docker.io — ask an admin to pre-pull the image or configure a registry mirror"},
		{"nvcr.io/nvidia/pytorch:99.99", `Error response from daemon: manifest for nvcr.io/nvidia/pytorch:99.99 not found: manifest unknown: manifest unknown`,
			"the image nvcr.io/nvidia/pytorch:99.99 does not exist on nvcr.io — ask an admin to correct the image reference in the catalog"},
		{"ghcr.io/acme/private:1", `Error response from daemon: Head "https://ghcr.io/v2/acme/private/manifests/1": unauthorized`,
			"ghcr.io refused to hand out ghcr.io/acme/private:1 (it needs credentials, or the name is wrong) — ask an admin to pre-pull the image or check its name"},
	} {
		e := newPullError(c.ref, c.raw)
		if e.Error() != c.want {
			t.Errorf("%s: %q\n want %q", c.raw, e.Error(), c.want)
		}
		if strings.Contains(e.Error(), "Error response from daemon") || !strings.Contains(c.raw, e.Details) {
			t.Errorf("%s: details %q", c.raw, e.Details)
		}
	}
}
