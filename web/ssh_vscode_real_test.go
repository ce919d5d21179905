//go:build linux

package web_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"workbench/internal/testsupport/freeport"
)

// What VS Code Remote-SSH does, done with Debian's OpenSSH client through
// the portal: `ssh -T host bash` with its probe script on stdin (uname,
// $SHELL), then `ssh -N -D port host` and the VS Code server reached
// through that SOCKS proxy at localhost:PORT inside the workbench (here
// Jupyter's port stands in for the VS Code server's). And what the gate
// refuses, by decision (docs/rental.md): remote forwarding (`ssh -R`) and
// agent forwarding.
func TestSSHAsVSCodeRemoteSSHDoes(t *testing.T) {
	p, _ := realJupyterPortal(t)
	port := p.serveSSH()
	alice := tokenFor(t, p, "alice", "user")
	code, wb := p.api("POST", "/api/v1/workbenches", alice, `{"name":"vscode","image":"jupyter","flavor":"CPU small"}`)
	if code != 202 {
		t.Fatalf("launch: %d %v", code, wb)
	}
	id := wb["id"].(string)
	waitState(t, p, alice, id, "running")
	a, _ := addVerifiedKey(t, p, port, alice, "vscode")

	// 1. The probe: bash reading a script on stdin, no pty.
	out, errs, code := a.run("vscode", "uname -rsv >/dev/null && uname -m\necho \"SHELL=$SHELL\"\necho probe-done\n", "-T", "bash")
	if code != 0 || !strings.Contains(out, "probe-done") || strings.TrimSpace(strings.SplitN(out, "\n", 2)[0]) == "" {
		t.Fatalf("probe script: %d %q %q", code, out, errs)
	}
	t.Logf("probe output (what VS Code reads): %q", out)

	// 2. Dynamic forwarding (-D), VS Code's default way to its server.
	sp, err := freeport.Port()
	if err != nil {
		t.Fatal(err)
	}
	socks := strconv.Itoa(sp)
	d := a.cmd(context.Background(), "vscode", "-N", "-D", "127.0.0.1:"+socks)
	d.Stderr = os.Stderr
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Process.Kill(); d.Wait() })
	reply := socksHTTPGet(t, "127.0.0.1:"+socks, "localhost", 8888, "/wb/"+id+"/api/status")
	if !strings.HasPrefix(reply, "HTTP/1.") {
		t.Fatalf("through ssh -D to localhost:8888: %q", reply)
	}

	// 3. Remote forwarding is refused: OpenSSH says so and gives up.
	if _, errs, code := a.run("vscode", "", "-o", "ExitOnForwardFailure=yes", "-R", "0:localhost:8888", "true"); code != 255 || !strings.Contains(errs, "forwarding failed") {
		t.Errorf("ssh -R: %d %q, want a refused forwarding", code, errs)
	}

	// 4. Agent forwarding is refused, and so is a remote listener, asked
	// directly with Go's client.
	raw, err := os.ReadFile(a.key)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ssh.Dial("tcp", "127.0.0.1:"+port, &ssh.ClientConfig{User: "vscode", Auth: []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := sess.SendRequest("auth-agent-req@openssh.com", true, nil); err != nil || ok {
		t.Errorf("agent forwarding accepted (%v %v)", ok, err)
	}
	sess.Close()
	if l, err := c.Listen("tcp", "127.0.0.1:0"); err == nil {
		l.Close()
		t.Errorf("a remote listener (tcpip-forward) was granted")
	}
}

// socksHTTPGet sends one HTTP GET through a SOCKS5 proxy (as VS Code's
// client does through ssh -D) and returns the start of the reply. It
// retries until the proxy listens.
func socksHTTPGet(t *testing.T, proxy, host string, port int, path string) string {
	t.Helper()
	var conn net.Conn
	var err error
	for deadline := time.Now().Add(time.Minute); ; {
		if conn, err = net.DialTimeout("tcp", proxy, 5*time.Second); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("SOCKS proxy of ssh -D never listened: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	r := bufio.NewReader(conn)
	must := func(err error) {
		if err != nil {
			t.Fatalf("SOCKS: %v", err)
		}
	}
	_, err = conn.Write([]byte{5, 1, 0}) // version 5, one method: no auth
	must(err)
	hello := make([]byte, 2)
	_, err = io.ReadFull(r, hello)
	must(err)
	req := append([]byte{5, 1, 0, 3, byte(len(host))}, host...)
	req = binary.BigEndian.AppendUint16(req, uint16(port))
	_, err = conn.Write(req)
	must(err)
	head := make([]byte, 4)
	_, err = io.ReadFull(r, head)
	must(err)
	if head[1] != 0 {
		t.Fatalf("SOCKS connect to %s:%d refused (code %d)", host, port, head[1])
	}
	skip := map[byte]int{1: 4 + 2, 4: 16 + 2}[head[3]]
	if head[3] == 3 {
		l, _ := r.ReadByte()
		skip = int(l) + 2
	}
	_, err = io.ReadFull(r, make([]byte, skip))
	must(err)
	_, err = fmt.Fprintf(conn, "GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n", path)
	must(err)
	line, _ := r.ReadString('\n')
	return line
}
