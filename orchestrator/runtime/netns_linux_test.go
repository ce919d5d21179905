package runtime

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	goruntime "runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// labNet is a stand-in for machines beyond the host: a network namespace
// joined to the host by a veth pair, with addresses of our choosing and a
// TCP listener on all of them. Packets from a workbench to it are routed
// by the host (FORWARD, DOCKER-USER), exactly like packets to a LAN server
// or to a cloud's metadata service, not delivered to the host (INPUT).
type labNet struct {
	ns       string // network namespace name
	hostIf   string // host end of the veth pair
	hostAddr string // its address
	Port     int    // the listener's port, on every address of the namespace
}

// newLabNet creates namespace wbeg-<run> with the veth pair, puts hostCIDR
// on the host end and addrs (CIDRs) on the namespace end, routes routes
// (host routes, e.g. a /32 to the metadata address) to it, and listens.
// Everything is removed at cleanup; deleting the namespace deletes the
// veth pair and with it every route through it.
func newLabNet(t *testing.T, run, hostCIDR string, addrs, routes []string) *labNet {
	t.Helper()
	l := &labNet{ns: "wbeg-" + run, hostIf: "wbeg" + run[:6] + "h", hostAddr: strings.Split(hostCIDR, "/")[0]}
	nsIf := "wbeg" + run[:6] + "n"
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "delete", l.ns).CombinedOutput(); err != nil {
			t.Errorf("cleanup: ip netns delete %s: %v %s", l.ns, err, out)
		}
		// The kernel removes the veth pair shortly after the namespace.
		for i := 0; ; i++ {
			if _, err := net.InterfaceByName(l.hostIf); err != nil {
				break
			}
			if i == 200 {
				t.Errorf("cleanup: %s still exists 20 s after its namespace was deleted", l.hostIf)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	sh(t, "ip", "netns", "add", l.ns)
	sh(t, "ip", "link", "add", l.hostIf, "type", "veth", "peer", "name", nsIf, "netns", l.ns)
	sh(t, "ip", "addr", "add", hostCIDR, "dev", l.hostIf)
	sh(t, "ip", "link", "set", l.hostIf, "up")
	for _, a := range addrs {
		sh(t, "ip", "-n", l.ns, "addr", "add", a, "dev", nsIf)
	}
	sh(t, "ip", "-n", l.ns, "link", "set", nsIf, "up")
	sh(t, "ip", "-n", l.ns, "link", "set", "lo", "up")
	sh(t, "ip", "-n", l.ns, "route", "add", "default", "via", l.hostAddr)
	for _, r := range routes {
		// A host route (169.254.169.254/32) can be held for a few seconds
		// by a concurrent run of this test: wait for it to be free.
		for start := time.Now(); ; time.Sleep(250 * time.Millisecond) {
			out, err := exec.Command("ip", "route", "add", r, "dev", l.hostIf).CombinedOutput()
			if err == nil {
				break
			}
			if !strings.Contains(string(out), "File exists") || time.Since(start) > 2*time.Minute {
				t.Fatalf("ip route add %s dev %s: %v %s", r, l.hostIf, err, out)
			}
		}
	}
	ln := listenInNetns(t, "/var/run/netns/"+l.ns, "0.0.0.0:0")
	l.Port = ln.Addr().(*net.TCPAddr).Port
	acceptAll(ln)
	t.Cleanup(func() { ln.Close() })
	return l
}

// listenInNetns opens a TCP listener inside the network namespace at path:
// a socket belongs to the namespace of the thread that created it, so one
// locked thread enters the namespace, listens and comes back.
func listenInNetns(t *testing.T, path, addr string) net.Listener {
	t.Helper()
	type result struct {
		ln  net.Listener
		err error
	}
	ch := make(chan result, 1)
	go func() {
		goruntime.LockOSThread()
		self, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", syscall.Gettid()))
		if err != nil {
			goruntime.UnlockOSThread()
			ch <- result{err: err}
			return
		}
		defer self.Close()
		target, err := os.Open(path)
		if err != nil {
			goruntime.UnlockOSThread()
			ch <- result{err: err}
			return
		}
		defer target.Close()
		if err := setns(target); err != nil {
			goruntime.UnlockOSThread()
			ch <- result{err: err}
			return
		}
		ln, err := net.Listen("tcp", addr)
		if err := setns(self); err != nil {
			// The thread stays in the wrong namespace: keep it locked so
			// it dies with this goroutine instead of running others.
			ch <- result{ln, fmt.Errorf("setns back: %w", err)}
			return
		}
		goruntime.UnlockOSThread()
		ch <- result{ln, err}
	}()
	r := <-ch
	if r.err != nil {
		t.Fatalf("listen in %s: %v", path, r.err)
	}
	return r.ln
}

func setns(f *os.File) error {
	return unix.Setns(int(f.Fd()), unix.CLONE_NEWNET)
}

func acceptAll(ln net.Listener) {
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
}

func sh(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v %s", name, strings.Join(args, " "), err, out)
	}
}
