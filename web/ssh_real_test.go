//go:build linux

// testimages.RealJupyter builds with debootstrap, so it exists on Linux only.

package web_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"workbench/internal/testsupport/testimages"
)

// sshClient is Debian's OpenSSH client pointed at the portal's SSH server
// with one private key.
type sshClient struct {
	t    *testing.T
	port string
	key  string
}

// newSSHKeyFile makes a key pair with ssh-keygen and returns the private
// key's path and the public key line.
func newSSHKeyFile(t *testing.T, name string) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		if testingCI() {
			t.Fatal("OpenSSH client missing (apt-get install openssh-client)")
		}
		t.Skip("OpenSSH client missing (apt-get install openssh-client)")
	}
	path := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	pub, err := os.ReadFile(path + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return path, strings.TrimSpace(string(pub))
}

// addVerifiedKey makes a key pair, adds its public key for token's user
// and verifies it as its holder does: one ssh as the verify user the API
// answered with. It returns the client with the key and the key's id.
func addVerifiedKey(t *testing.T, p *testPortal, port, token, name string) (sshClient, int64) {
	t.Helper()
	path, pub := newSSHKeyFile(t, name)
	code, body := p.api("POST", "/api/v1/ssh-keys", token, jsonBody(map[string]string{"name": name, "public_key": pub}))
	if code != 201 {
		t.Fatalf("register %s: %d %v", name, code, body)
	}
	item := body["item"].(map[string]any)
	c := sshClient{t: t, port: port, key: path}
	verifyUser, _ := item["verify_user"].(string)
	if out, errs, code := c.run(verifyUser, ""); code != 0 || !strings.Contains(out, "verified") {
		t.Fatalf("verify %s as %q: %d %q %q", name, verifyUser, code, out, errs)
	}
	return c, int64(item["id"].(float64))
}

func (s sshClient) cmd(ctx context.Context, target string, args ...string) *exec.Cmd {
	base := []string{"-p", s.port, "-i", s.key, "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
		"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
		"-o", "ConnectTimeout=30", "-F", "/dev/null"}
	return exec.CommandContext(ctx, "ssh", append(append(base, target+"@127.0.0.1"), args...)...)
}

// run runs `ssh target args…` with stdin and returns stdout, stderr and the exit status.
func (s sshClient) run(target, stdin string, args ...string) (string, string, int) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := s.cmd(ctx, target, args...)
	var out, errb bytes.Buffer
	c.Stdin, c.Stdout, c.Stderr = strings.NewReader(stdin), &out, &errb
	err := c.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		s.t.Fatalf("ssh: %v", err)
	}
	return out.String(), errb.String(), code
}

// waitExit waits for a background ssh to end and returns its exit status.
func waitExit(t *testing.T, c *exec.Cmd, what string) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		return 0
	case <-time.After(2 * time.Minute):
		c.Process.Kill()
		t.Fatalf("%s: the ssh session was not closed", what)
		return -1
	}
}

// startSleeper opens a long-running ssh session and waits until the portal
// holds its connection.
func startSleeper(t *testing.T, p *testPortal, s sshClient, id string, args ...string) *exec.Cmd {
	t.Helper()
	c := s.cmd(context.Background(), id, args...)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill() })
	deadline := time.Now().Add(time.Minute)
	for p.srv.SSH().OpenConnections(id) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the ssh session never connected")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return c
}

// TestSSHIntoWorkbench connects Debian's OpenSSH client through the
// portal's SSH server to a real (Debian-based) workbench: commands run
// inside the container as the image's user, exit codes, stdin and ptys
// come through, other users and deleted keys are refused, and sessions end
// when their key is deleted or the workbench stops.
func TestSSHIntoWorkbench(t *testing.T) {
	p, _ := realJupyterPortal(t)
	port := p.serveSSH()

	alice := tokenFor(t, p, "alice", "user")
	bob := tokenFor(t, p, "bob", "user")
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"sshbox","image":"jupyter","flavor":"CPU small"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, p, alice, id, "running")

	a, aID := addVerifiedKey(t, p, port, alice, "alice-laptop")
	a2, a2ID := addVerifiedKey(t, p, port, alice, "alice-desktop")
	b, _ := addVerifiedKey(t, p, port, bob, "bob-laptop")

	// A command, by workbench id and by name, as the image's user in its home.
	if out, errs, code := a.run(id, "", "echo", "hi"); code != 0 || out != "hi\n" {
		t.Fatalf("ssh echo hi: %d %q %q", code, out, errs)
	}
	if out, errs, code := a.run("sshbox", "", "id -u; pwd"); code != 0 || out != testimages.RealJupyterUser+"\n"+testimages.RealJupyterHome+"\n" {
		t.Fatalf("ssh by name, id -u; pwd: %d %q %q", code, out, errs)
	}
	// The exit status and stderr come back; stdin goes in.
	if out, errs, code := a.run(id, "", "echo oops >&2; exit 7"); code != 7 || out != "" || errs != "oops\n" {
		t.Fatalf("exit 7: %d %q %q", code, out, errs)
	}
	if out, _, code := a.run(id, "line one\nline two\n", "wc", "-l"); code != 0 || strings.TrimSpace(out) != "2" {
		t.Fatalf("stdin: %d %q", code, out)
	}
	// A pseudo-terminal when asked for (-tt): the command sees a tty.
	if out, errs, code := a.run(id, "", "-tt", "tty; exit 3"); code != 3 || !strings.Contains(out, "/dev/pts/") {
		t.Fatalf("pty: %d %q %q", code, out, errs)
	}
	// An interactive login shell (no command): what is typed runs there.
	if out, errs, code := a.run(id, "echo shell-$((2+3)); exit 5\n", "-tt"); code != 5 || !strings.Contains(out, "shell-5") {
		t.Fatalf("interactive shell: %d %q %q", code, out, errs)
	}
	checkWindowChange(t, port, a.key, id)
	// This image has no sftp-server: sftp is refused with the reason.
	if _, errs, code := a.run(id, "", "-s", "sftp"); code == 0 || !strings.Contains(errs, "no sftp-server") {
		t.Fatalf("sftp on an image without sftp-server: %d %q", code, errs)
	}
	// Forwarding reaches the workbench's own ports (here its Jupyter,
	// from inside the container), and nothing else.
	if out, errs, code := a.run(id, "GET /wb/"+id+"/api/status HTTP/1.0\r\nHost: localhost\r\n\r\n", "-W", "localhost:8888"); code != 0 || !strings.HasPrefix(out, "HTTP/1.") {
		t.Fatalf("ssh -W localhost:8888: %d %q %q", code, out, errs)
	}
	if _, errs, code := a.run(id, "", "-W", "10.1.2.3:80"); code != 255 || !strings.Contains(errs, "forwarding failed") {
		t.Fatalf("forwarding elsewhere: %d %q", code, errs)
	}

	// Bob's key does not open Alice's workbench, by id or by name.
	for _, target := range []string{id, "sshbox"} {
		if out, errs, code := b.run(target, "", "echo", "in"); code != 255 || out != "" || !strings.Contains(errs, "Permission denied") {
			t.Fatalf("bob into alice's %s: %d %q %q", target, code, out, errs)
		}
	}

	// Deleting a key ends its open sessions and refuses it afterwards.
	p.srv.SSH().SetKeyCheckEvery(200 * time.Millisecond)
	sleeper := startSleeper(t, p, a2, id, "sleep", "600")
	if code, _ := p.api("DELETE", "/api/v1/ssh-keys/"+strconv.FormatInt(a2ID, 10), alice, ""); code != 204 {
		t.Fatalf("delete key: %d", code)
	}
	if code := waitExit(t, sleeper, "key deleted"); code == 0 {
		t.Fatal("the session of a deleted key ended with status 0")
	}
	if _, errs, code := a2.run(id, "", "true"); code != 255 || !strings.Contains(errs, "Permission denied") {
		t.Fatalf("deleted key: %d %q", code, errs)
	}

	// Stopping the workbench closes its connections, even one with no
	// session (-N: only the portal can end it); afterwards ssh says why not.
	sleeper = startSleeper(t, p, a, id, "-N")
	if code, body := p.api("POST", "/api/v1/workbenches/"+id+"/stop", alice, ""); code != 202 && code != 200 {
		t.Fatalf("stop: %d %v", code, body)
	}
	waitExit(t, sleeper, "workbench stopped")
	waitState(t, p, alice, id, "stopped")
	if _, errs, code := a.run(id, "", "true"); code != 1 || !strings.Contains(errs, "is stopped") {
		t.Fatalf("ssh into a stopped workbench: %d %q", code, errs)
	}

	// Every session is audited, start and end.
	entries, _ := p.srv.Store.ListAudit(context.Background(), 200)
	starts, ends, forwards := 0, 0, 0
	for _, e := range entries {
		if e.Target == id && e.Actor == "alice" {
			switch e.Action {
			case "ssh.session.start":
				starts++
			case "ssh.session.end":
				ends++
			case "ssh.forward":
				forwards++
			}
		}
	}
	if starts < 6 || ends < 6 || forwards != 1 {
		t.Fatalf("audit: %d starts, %d ends, %d forwards", starts, ends, forwards)
	}
	_ = aID
}

// lockedBuffer collects a session's output for polling.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// checkWindowChange resizes a terminal the way a terminal window does (an
// SSH window-change) and sees the shell in the workbench follow.
func checkWindowChange(t *testing.T, port, keyPath, target string) {
	t.Helper()
	pem, err := os.ReadFile(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(pem)
	if err != nil {
		t.Fatal(err)
	}
	client, err := ssh.Dial("tcp", "127.0.0.1:"+port, &ssh.ClientConfig{User: target, Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	sess, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if err := sess.RequestPty("xterm", 24, 80, ssh.TerminalModes{ssh.ECHO: 0}); err != nil {
		t.Fatal(err)
	}
	var out lockedBuffer
	sess.Stdout = &out
	stdin, _ := sess.StdinPipe()
	if err := sess.Shell(); err != nil {
		t.Fatal(err)
	}
	waitFor := func(want string) {
		deadline := time.Now().Add(time.Minute)
		for !strings.Contains(out.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("terminal never showed %q: %q", want, out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	io.WriteString(stdin, "stty size | sed 's/^/size=/'\n")
	waitFor("size=24 80")
	if err := sess.WindowChange(40, 120); err != nil {
		t.Fatal(err)
	}
	// The resize goes through the engine asynchronously; ask until it shows.
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(out.String(), "size=40 120") {
		if time.Now().After(deadline) {
			t.Fatalf("window change not seen: %q", out.String())
		}
		io.WriteString(stdin, "stty size | sed 's/^/size=/'\n")
		time.Sleep(200 * time.Millisecond)
	}
	io.WriteString(stdin, "exit 0\n")
	if err := sess.Wait(); err != nil {
		t.Fatalf("shell exit: %v", err)
	}
}
