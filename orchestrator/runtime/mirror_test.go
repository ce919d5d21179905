package runtime

import (
	"strings"
	"testing"
)

// Every reference form is rewritten to the same repository, tag and digest
// at its registry's mirror: no host (Docker Hub, library/ for one path
// element), a host with a port, a digest, a tag and a digest, no tag.
func TestMirrorRewriteEveryReferenceForm(t *testing.T) {
	m, err := ParseMirrors(`
# Docker Hub, NVIDIA and Quay through the lab's mirrors
docker.io = registry.example.cn
nvcr.io = harbor.lab.cn/nvcr
quay.io   mirror.example.cn:5443
registry.local:5000 = 10.0.0.9:5000
`)
	if err != nil {
		t.Fatal(err)
	}
	const dg = "sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, c := range []struct{ in, want string }{
		{"ubuntu", "registry.example.cn/library/ubuntu:latest"},
		{"ubuntu:22.04", "registry.example.cn/library/ubuntu:22.04"},
		{"jupyter/base-notebook:2024-01", "registry.example.cn/jupyter/base-notebook:2024-01"},
		{"docker.io/jupyter/base-notebook", "registry.example.cn/jupyter/base-notebook:latest"},
		{"index.docker.io/library/python:3.12", "registry.example.cn/library/python:3.12"},
		{"ubuntu@" + dg, "registry.example.cn/library/ubuntu@" + dg},
		{"ubuntu:22.04@" + dg, "registry.example.cn/library/ubuntu:22.04@" + dg},
		{"nvcr.io/nvidia/pytorch:24.05-py3", "harbor.lab.cn/nvcr/nvidia/pytorch:24.05-py3"},
		{"nvcr.io/nvidia/pytorch@" + dg, "harbor.lab.cn/nvcr/nvidia/pytorch@" + dg},
		{"quay.io/jupyter/scipy-notebook:2024-05-27", "mirror.example.cn:5443/jupyter/scipy-notebook:2024-05-27"},
		{"registry.local:5000/team/img:v1", "10.0.0.9:5000/team/img:v1"},
		{"registry.local:5000/team/img@" + dg, "10.0.0.9:5000/team/img@" + dg},
	} {
		got, ok, err := m.Rewrite(c.in)
		if err != nil || !ok || got != c.want {
			t.Errorf("%s → %q (%v, %v), want %q", c.in, got, ok, err, c.want)
		}
	}
	// No mirror for the registry: the reference is only normalised (tag
	// made explicit so the engine pulls one tag).
	for in, want := range map[string]string{
		"ghcr.io/org/img":                 "ghcr.io/org/img:latest",
		"registry.local:5001/team/img:v1": "registry.local:5001/team/img:v1",
		"ghcr.io/org/img@" + dg:           "ghcr.io/org/img@" + dg,
	} {
		got, ok, err := m.Rewrite(in)
		if err != nil || ok || got != want {
			t.Errorf("%s → %q (%v, %v), want %q unmirrored", in, got, ok, err, want)
		}
	}
	if _, _, err := m.Rewrite("Not A Reference"); err == nil {
		t.Error("a malformed reference was rewritten")
	}
	var none Mirrors
	if got, ok, err := none.Rewrite("ubuntu"); err != nil || ok || got != "docker.io/library/ubuntu:latest" {
		t.Errorf("no mirrors: %q %v %v", got, ok, err)
	}
	// The setting reads back in its own form.
	again, err := ParseMirrors(m.String())
	if err != nil || again.String() != m.String() {
		t.Errorf("round trip: %q %v", again.String(), err)
	}
}

func TestParseMirrorsRefusesBadLines(t *testing.T) {
	for _, bad := range []string{
		"docker.io",                            // no mirror
		"docker.io = https://registry.example", // scheme
		"docker.io/library = registry.example", // path on the registry side
		"docker.io = reg istry.example",        // space
		"docker.io = a.example\ndocker.io = b.example",
		"ubuntu = registry.example.cn", // not a host
	} {
		if _, err := ParseMirrors(bad); err == nil {
			t.Errorf("accepted %q", bad)
		} else if !strings.Contains(err.Error(), "line") {
			t.Errorf("%q: the error does not name the line: %v", bad, err)
		}
	}
	// A path in capitals is named as the mistake, with the path to use.
	if _, err := ParseMirrors("quay.io = harbor.lab.cn/Quay"); err == nil || err.Error() != `line 1: mirror "harbor.lab.cn/Quay" must have a lowercase path (harbor.lab.cn/quay)` {
		t.Errorf("a path in capitals: %v", err)
	}
	if m, err := ParseMirrors("index.docker.io = registry.example.cn"); err != nil || m["docker.io"] != "registry.example.cn" {
		t.Errorf("index.docker.io is Docker Hub: %v %v", m, err)
	}
}
