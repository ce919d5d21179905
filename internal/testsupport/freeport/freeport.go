// Package freeport chooses TCP ports on 127.0.0.1 for a test's programs
// to bind later, away from the ports outgoing connections take.
package freeport

import (
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// A port chosen now and bound later (a Kubernetes component a minute
// after its ports were chosen, a portal restarted on its old address) must
// not be one the kernel hands out for 127.0.0.1:0: those come from the
// ephemeral range, the range every outgoing connection takes its local
// port from, and CI saw kwok's port taken that way. So ports come from
// below that range, where only a program that asks for a port by number
// binds.

// lowestPort is where the chosen ports begin: above the ports services
// commonly use.
const lowestPort = 20000

var handedOut struct {
	sync.Mutex
	ports map[int]bool // never handed out twice by this test binary
}

// Port returns a port on 127.0.0.1 that is free now, outside the
// kernel's ephemeral range when that leaves room, else one the kernel picks.
func Port() (int, error) {
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

// Addr is Port as host:port on 127.0.0.1.
func Addr() (string, error) {
	port, err := Port()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), nil
}

func bindable(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	_ = l.Close()
	return true
}
