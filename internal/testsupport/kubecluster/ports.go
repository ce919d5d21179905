package kubecluster

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// The control plane's ports are chosen before its components start, and
// the last of them (kwok) binds its port up to a minute later on a busy
// machine. A port the kernel hands out for 127.0.0.1:0 comes from the
// ephemeral range, the range every outgoing connection takes its local
// port from, the components' own connections to the apiserver among them:
// CI saw kwok's port taken that way. So ports come from below that range,
// where only a program that asks for a port by number binds; the start is
// tried again with fresh ports when a component still finds its port taken
// (portTaken).

// lowestPort is where the chosen ports begin: above the ports services
// commonly use.
const lowestPort = 20000

var handedOut struct {
	sync.Mutex
	ports map[int]bool // never handed out twice by this test binary
}

// freePort returns a port on 127.0.0.1 that is free now, outside the
// kernel's ephemeral range when that leaves room, else one the kernel picks.
func freePort() (int, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports == nil {
		handedOut.ports = map[int]bool{}
	}
	if top := ephemeralStart(); top-lowestPort >= 1000 {
		for range 200 {
			port := lowestPort + rand.IntN(top-lowestPort)
			if handedOut.ports[port] || !bindable(port) {
				continue
			}
			handedOut.ports[port] = true
			return port, nil
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	handedOut.ports[port] = true
	return port, nil
}

// ephemeralStart is the first port of the kernel's ephemeral range
// (Linux's default 32768 when it cannot be read).
func ephemeralStart() int {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	fields := strings.Fields(string(data))
	if len(fields) != 2 {
		return 32768
	}
	low, err := strconv.Atoi(fields[0])
	if err != nil {
		return 32768
	}
	return low
}

func bindable(port int) bool {
	l, err := net.Listen("tcp", hostPort(port))
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}

// portTaken says whether a start failed because a component could not bind
// its port (its log, carried in the error, says so).
func portTaken(err error) bool {
	return err != nil && strings.Contains(err.Error(), "address already in use")
}

// componentPort chooses a component's port; a test makes one taken.
var componentPort = func(component string) (int, error) { return freePort() }

// startTries bounds the starts with fresh ports.
const startTries = 3

// startRetrying starts a control plane in a directory from mkdir, again in
// a new one with new ports when a component found its port taken. A failed
// try is stopped and its directory removed; the last error is returned
// with whatever of that try did start.
func startRetrying(mkdir func() (string, error)) (*Cluster, string, error) {
	for try := 1; ; try++ {
		dir, err := mkdir()
		if err != nil {
			return nil, "", err
		}
		c, err := start(dir)
		if try == startTries || !portTaken(err) {
			return c, dir, err
		}
		if c != nil {
			c.cp.stop(c.Client)
		}
		_ = os.RemoveAll(dir)
	}
}
