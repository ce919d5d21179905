package web_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sshBanner connects to the SSH gate and returns the first line it says
// ("" when it closes the connection without a word), and the connection.
func sshBanner(t *testing.T, port string) (string, net.Conn) {
	t.Helper()
	return sshBannerFrom(t, "127.0.0.1", port)
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

// sshBannerFrom is sshBanner from the loopback address src (any 127.x.y.z
// is this machine), so one test can be many clients.
func sshBannerFrom(t *testing.T, src, port string) (string, net.Conn) {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	c, err := d.Dial("tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetReadDeadline(time.Now().Add(30 * time.Second)) // a refusal closes at once; only a busy machine waits
	line, _ := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line), c
}

// A flood from many addresses that holds every handshake slot open does
// not lock others out: a new connection is served, and the handshake open
// longest is closed to make room (session 54 left this open: 100 idle
// connections from 10 addresses refused everyone for as long as they were
// renewed, one per slot every 30 s).
func TestSSHHandshakeFloodFromManyAddressesLetsANewcomerIn(t *testing.T) {
	p := newPortal(t)
	port := p.serveSSH()
	const total, perAddress = 100, 10 // sshgate.maxHandshakes, maxHandshakesPerAddress
	var flood []net.Conn
	for i := range total {
		src := "127.0.1." + strconv.Itoa(1+i/perAddress)
		banner, c := sshBannerFrom(t, src, port)
		if !strings.HasPrefix(banner, "SSH-2.0-") {
			t.Fatalf("flood connection %d from %s: banner %q", i+1, src, banner)
		}
		flood = append(flood, c) // never answers: its handshake stays open
	}
	banner, newcomer := sshBannerFrom(t, "127.0.2.1", port)
	if !strings.HasPrefix(banner, "SSH-2.0-") {
		t.Fatalf("a newcomer while %d handshakes are held open: banner %q; want it served", total, banner)
	}
	// The oldest flood connection was closed for it (the server ends it:
	// a read sees the end, not its deadline), and only that one.
	if err := firstReadError(flood[0], 30*time.Second); !errors.Is(err, io.EOF) && !isReset(err) {
		t.Fatalf("the oldest handshake after a newcomer took its slot: read %v; want it closed by the gate", err)
	}
	for _, c := range []net.Conn{flood[1], newcomer} {
		if err := firstReadError(c, 200*time.Millisecond); errors.Is(err, io.EOF) || isReset(err) {
			t.Fatalf("a handshake other than the oldest was closed: %v", err)
		}
	}
}

// firstReadError reads c (skipping what the server sends, such as its key
// exchange offer) until a read fails or wait passes, and returns the error.
func firstReadError(c net.Conn, wait time.Duration) error {
	c.SetReadDeadline(time.Now().Add(wait))
	buf := make([]byte, 4096)
	for {
		if _, err := c.Read(buf); err != nil {
			return err
		}
	}
}

func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }
