//go:build linux

package web_test

import (
	"strings"
	"testing"
)

// An image without /bin/sh (the fake Jupyter is a lone static binary):
// ssh says so in one sentence instead of the engine's "OCI runtime exec
// failed: … stat /bin/sh: no such file or directory".
func TestSSHIntoAnImageWithoutAShell(t *testing.T) {
	p, _ := enginePortal(t)
	port := p.serveSSH()
	alice := tokenFor(t, p, "alice", "user")
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"bare","image":"fake","flavor":"CPU small"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, p, alice, id, "running")
	a, _ := addVerifiedKey(t, p, port, alice, "alice-laptop")
	_, errs, exit := a.run(id, "", "echo", "hi")
	if exit == 0 || !strings.Contains(errs, "has no shell (/bin/sh)") || strings.Contains(errs, "OCI runtime") {
		t.Fatalf("ssh into an image without a shell: %d %q", exit, errs)
	}
}
