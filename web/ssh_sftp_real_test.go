//go:build linux

package web_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"workbench/internal/testsupport/testimages"
)

// TestSSHSFTPAndSCP moves files in and out of a workbench with OpenSSH's
// sftp and scp through the portal, on an image that has sftp-server: the
// files land in the home, owned by the image's user.
func TestSSHSFTPAndSCP(t *testing.T) {
	if _, err := os.Stat(testimages.HostSFTPServer); err != nil {
		if testingCI() {
			t.Fatal("openssh-sftp-server missing on the host")
		}
		t.Skip("openssh-sftp-server missing on the host")
	}
	p, _ := enginePortal(t)
	ctx := t.Context()
	p.addImage(realCatalogImage("jupyter-sftp", sftpJupyterImage(t)))
	port := p.serveSSH()

	alice := tokenFor(t, p, "alice", "user")
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"files","image":"jupyter-sftp","flavor":"CPU small"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, p, alice, id, "running")
	a, _ := addVerifiedKey(t, p, port, alice, "laptop")
	key := a.key
	opts := []string{"-i", key, "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no",
		"-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "-F", "/dev/null"}

	dir := t.TempDir()
	local := filepath.Join(dir, "data.csv")
	content := strings.Repeat("a,b,c\n", 20000) // 120 kB: several SFTP packets
	if err := os.WriteFile(local, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	batch := filepath.Join(dir, "batch")
	os.WriteFile(batch, []byte("put "+local+" data.csv\nmkdir results\nls\n"), 0o644)
	out, err := exec.CommandContext(ctx, "sftp", append(append([]string{"-P", port, "-b", batch}, opts...), id+"@127.0.0.1")...).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "data.csv") {
		t.Fatalf("sftp put: %v\n%s", err, out)
	}
	if out, errs, code := a.run(id, "", "stat -c '%u %s' "+testimages.RealJupyterHome+"/data.csv; test -d results && echo dir"); code != 0 ||
		out != testimages.RealJupyterUser+" 120000\ndir\n" {
		t.Fatalf("the uploaded file in the workbench: %d %q %q", code, out, errs)
	}
	// scp both ways (OpenSSH's scp speaks SFTP to the server).
	if out, err := exec.CommandContext(ctx, "scp", append(append([]string{"-P", port}, opts...), local, id+"@127.0.0.1:results/copy.csv")...).CombinedOutput(); err != nil {
		t.Fatalf("scp up: %v %s", err, out)
	}
	back := filepath.Join(dir, "back.csv")
	if out, err := exec.CommandContext(ctx, "scp", append(append([]string{"-P", port}, opts...), id+"@127.0.0.1:results/copy.csv", back)...).CombinedOutput(); err != nil {
		t.Fatalf("scp down: %v %s", err, out)
	}
	if got, _ := os.ReadFile(back); string(got) != content {
		t.Fatalf("scp round trip: %d bytes, want %d", len(got), len(content))
	}
}
