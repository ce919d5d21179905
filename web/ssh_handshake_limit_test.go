package web_test

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"
)

// sshBanner connects to the SSH gate and returns the first line it says
// ("" when it closes the connection without a word), and the connection.
func sshBanner(t *testing.T, port string) (string, net.Conn) {
	t.Helper()
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, _ := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line), c
}

// Connections that have not authenticated are limited per address, as
// OpenSSH's MaxStartups does (security review, session 54): before, anyone
// who reached the port could hold any number of handshakes open, each a
// goroutine for 30 s and up to six database lookups of offered keys. From
// one address the 11th connection still in its handshake is closed before
// the banner; once one of the ten ends, a new one is served again.
func TestSSHHandshakesLimitedPerAddress(t *testing.T) {
	p := newPortal(t)
	port := p.serveSSH()
	const perAddress = 10 // sshgate.maxHandshakesPerAddress
	var idle []net.Conn
	for i := range perAddress {
		banner, c := sshBanner(t, port)
		if !strings.HasPrefix(banner, "SSH-2.0-") {
			t.Fatalf("connection %d: banner %q", i+1, banner)
		}
		idle = append(idle, c) // never answers: its handshake stays open
	}
	if banner, _ := sshBanner(t, port); banner != "" {
		t.Fatalf("connection %d while %d handshakes from this address are open: banner %q; want it closed", perAddress+1, perAddress, banner)
	}
	idle[0].Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		banner, c := sshBanner(t, port)
		if strings.HasPrefix(banner, "SSH-2.0-") {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no connection served after one of the open handshakes ended")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
