package runtime

import (
	"strings"
	"testing"
)

// A saved image missing from the engine was made there and is in no
// registry: its failure says it was removed, not "this server cannot
// download from docker.io — configure a registry mirror".
func TestPullErrorOfAMissingSavedImage(t *testing.T) {
	e := newPullError("workbench-saved/abc/u2-upper:v1", "Error response from daemon: pull access denied for workbench-saved/abc/u2-upper, repository does not exist")
	if !strings.Contains(e.Reason, "is no longer on this server") || strings.Contains(e.Reason, "mirror") {
		t.Fatalf("reason %q", e.Reason)
	}
	if got := AdminWording(e.Reason); !strings.Contains(got, "no longer on this server") {
		t.Fatalf("admin wording %q", got)
	}
}

// A pull through the admin's registry mirror that fails names the mirror
// to check, not the registry with "configure a registry mirror" (it has
// one); the engine's words stay in the details.
func TestPullErrorThroughAMirror(t *testing.T) {
	raw := `Get "http://127.0.0.1:5999/v2/": context deadline exceeded`
	e := newMirrorPullError("quay.io/jupyter/pytorch-notebook:cuda12", "127.0.0.1:5999/jupyter/pytorch-notebook:cuda12", raw)
	if !strings.Contains(e.Reason, "through the registry mirror 127.0.0.1:5999") || strings.Contains(e.Reason, "configure a registry mirror") {
		t.Fatalf("reason %q", e.Reason)
	}
	if !strings.Contains(e.Details, raw) {
		t.Fatalf("details %q lack the engine's words", e.Details)
	}
	if got := AdminWording(e.Reason); !strings.Contains(got, "check or remove that mirror") {
		t.Fatalf("admin wording %q", got)
	}
	// A full disk is a full disk, mirror or not.
	if e := newMirrorPullError("quay.io/a/b:1", "m.example/a/b:1", "write /var/lib/docker: no space left on device"); !strings.Contains(e.Reason, "disk is full") {
		t.Fatalf("full disk through a mirror: %q", e.Reason)
	}
}
