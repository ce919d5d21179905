package web_test

import (
	"bufio"
	"context"
	"flag"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"workbench/internal/testsupport/freeport"
	"workbench/web"
	"workbench/web/sshgate"
)

// With WORKBENCH_SSH_ADDR set, Serve also answers SSH there, with a host
// key it keeps in the data directory.
func TestServeAnswersSSHOnItsAddress(t *testing.T) {
	t.Setenv("WORKBENCH_SSH_ADDR", "127.0.0.1:2299")
	var fromEnv web.Config
	fromEnv.BindFlags(flag.NewFlagSet("x", flag.ContinueOnError))
	if fromEnv.SSHAddr != "127.0.0.1:2299" {
		t.Fatalf("WORKBENCH_SSH_ADDR read as %q", fromEnv.SSHAddr)
	}

	addr, err := freeport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	var dataDir string
	p := newPortal(t, func(c *web.Config) { c.SSHAddr = addr; dataDir = c.DataDir })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.srv.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })

	deadline := time.Now().Add(30 * time.Second)
	var banner string
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.SetDeadline(time.Now().Add(10 * time.Second))
			banner, _ = bufio.NewReader(c).ReadString('\n')
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing answers SSH on %s", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.HasPrefix(banner, "SSH-2.0-workbench") {
		t.Fatalf("banner %q", banner)
	}
	st, err := os.Stat(filepath.Join(dataDir, sshgate.HostKeyFile))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("host key in the data directory: %v %v", st, err)
	}
}
