package runtime

import (
	"strings"
	"testing"
)

// The engine's error chains, as Docker words them, become one sentence that
// names the registry and what to do; the chain is kept as details. A user
// is told what to ask an admin for; an admin is told what to do.
func TestPullErrorWording(t *testing.T) {
	for _, c := range []struct{ ref, raw, want, admin string }{
		{"quay.io/jupyter/pytorch-notebook:cuda12-python-3.11",
			`Error response from daemon: Get "https://quay.io/v2/": dial tcp: lookup quay.io on 127.0.0.53:53: server misbehaving`,
			"this server cannot download from quay.io — ask an admin to pre-pull the image or configure a registry mirror",
			"this server cannot download from quay.io — set a mirror for it under Admin → Registries, or load the image from an archive (workbench image load)"},
		{"quay.io/jupyter/pytorch-notebook:x",
			`Error response from daemon: Get "https://quay.io/v2/": net/http: request canceled while waiting for connection (Client.Timeout exceeded while awaiting headers)`,
			"this server cannot download from quay.io — ask an admin to pre-pull the image or configure a registry mirror",
			"this server cannot download from quay.io — set a mirror for it under Admin → Registries, or load the image from an archive (workbench image load)"},
		{"ubuntu:24.04", `Error response from daemon: Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io: no such host`,
			"this server cannot download from docker.io — ask an admin to pre-pull the image or configure a registry mirror",
			"this server cannot download from docker.io — set a mirror for it under Admin → Registries, or load the image from an archive (workbench image load)"},
		{"nvcr.io/nvidia/pytorch:99.99", `Error response from daemon: manifest for nvcr.io/nvidia/pytorch:99.99 not found: manifest unknown: manifest unknown`,
			"the image nvcr.io/nvidia/pytorch:99.99 does not exist on nvcr.io — ask an admin to correct the image reference in the catalog",
			"the image nvcr.io/nvidia/pytorch:99.99 does not exist on nvcr.io — correct the image reference in the catalog"},
		{"ghcr.io/acme/private:1", `Error response from daemon: Head "https://ghcr.io/v2/acme/private/manifests/1": unauthorized`,
			"ghcr.io refused to hand out ghcr.io/acme/private:1 (it needs credentials, or the name is wrong) — ask an admin to pre-pull the image or check its name",
			"ghcr.io refused to hand out ghcr.io/acme/private:1 (it needs credentials, or the name is wrong) — check its name, or load the image from an archive (workbench image load)"},
		{"nvcr.io/nvidia/pytorch:24.01", `Error response from daemon: write /var/lib/docker/tmp/GetImageBlob123: no space left on device`,
			"this server's disk is full, so nvcr.io/nvidia/pytorch:24.01 cannot be downloaded — ask an admin to free disk space, then try again",
			"this server's disk is full, so nvcr.io/nvidia/pytorch:24.01 cannot be downloaded — free disk space on the engine's disk, then try again"},
		{"bad::ref", "not a valid image reference: invalid reference format",
			"bad::ref is not a valid image reference — ask an admin to correct it in the catalog",
			"bad::ref is not a valid image reference — correct it in the catalog"},
		{"registry.lab/x:1", `Error response from daemon: received unexpected HTTP status: 500 Internal Server Error`,
			"this server could not download registry.lab/x:1 from registry.lab — ask an admin to pre-pull the image (the details below say why)",
			"this server could not download registry.lab/x:1 from registry.lab (the details below say why)"},
	} {
		e := newPullError(c.ref, c.raw)
		if e.Error() != c.want {
			t.Errorf("%s: %q\n want %q", c.raw, e.Error(), c.want)
		}
		if e.AdminReason != c.admin {
			t.Errorf("%s: for an admin %q\n want %q", c.raw, e.AdminReason, c.admin)
		}
		if strings.Contains(e.Error(), "Error response from daemon") || !strings.Contains(c.raw, e.Details) {
			t.Errorf("%s: details %q", c.raw, e.Details)
		}
		// A failed workbench stores the user's wording as a sentence; an
		// administrator reading it gets theirs.
		// It starts with a capital unless it starts with a name (a
		// registry, a reference), as the orchestrator's sentence() does.
		upper := func(s string) string {
			if 'a' <= s[0] && s[0] <= 'z' && !strings.ContainsAny(s[:strings.IndexByte(s, ' ')], ".:/") {
				return strings.ToUpper(s[:1]) + s[1:]
			}
			return s
		}
		stored := upper(c.want) + "."
		if got, want := AdminWording(stored), upper(c.admin)+"."; got != want {
			t.Errorf("AdminWording(%q)\n = %q\nwant %q", stored, got, want)
		}
		// A reason stored before names were kept as written ("Ghcr.io
		// refused …") is still recognised.
		old := strings.ToUpper(c.want[:1]) + c.want[1:] + "."
		if got := AdminWording(old); got == old {
			t.Errorf("AdminWording(%q) left it as it is", old)
		}
	}
	for _, other := range []string{"Exited with code 1 while starting.", "", "the image x does not exist on y"} {
		if got := AdminWording(other); got != other {
			t.Errorf("AdminWording(%q) = %q, want it unchanged", other, got)
		}
	}
}
