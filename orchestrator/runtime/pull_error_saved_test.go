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
