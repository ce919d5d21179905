package sshgate

import (
	"net"
	"strconv"
	"testing"
)

// addrConn is a connection from a given address; Close is counted.
type addrConn struct {
	net.Conn
	addr   net.Addr
	closed bool
}

func (c *addrConn) RemoteAddr() net.Addr { return c.addr }
func (c *addrConn) Close() error         { c.closed = true; return nil }

func connFrom(ip string) *addrConn {
	return &addrConn{addr: &net.TCPAddr{IP: net.ParseIP(ip), Port: 40000}}
}

// The slot a newcomer takes from the oldest handshake is counted once: the
// evicted handshake's own release, when its goroutine gets to it, gives
// nothing back twice, so the limit stays exact under churn.
func TestHandshakeEvictionKeepsTheCount(t *testing.T) {
	l := newHandshakeLimit()
	var conns []*addrConn
	var releases []func()
	for i := range maxHandshakes {
		c := connFrom("10.0." + strconv.Itoa(i/maxHandshakesPerAddress) + ".1")
		rel, ok := l.acquire(c)
		if !ok {
			t.Fatalf("handshake %d refused under the limits", i+1)
		}
		conns, releases = append(conns, c), append(releases, rel)
	}
	newcomer := connFrom("10.1.0.1")
	relNew, ok := l.acquire(newcomer)
	if !ok {
		t.Fatal("a newcomer was refused with every slot taken; want the oldest evicted")
	}
	if !conns[0].closed || conns[1].closed {
		t.Fatalf("closed: oldest %v, second %v; want only the oldest", conns[0].closed, conns[1].closed)
	}
	releases[0]() // the evicted handshake ends and gives back its slot: already given
	if n := l.open.Len(); n != maxHandshakes {
		t.Fatalf("%d handshakes counted after the evicted one's release; want %d", n, maxHandshakes)
	}
	// Its address has one fewer: a tenth from it fits again.
	if _, ok := l.acquire(connFrom("10.0.0.1")); !ok {
		t.Fatal("the evicted handshake's address still counts it")
	}
	if !conns[1].closed {
		t.Fatal("the next newcomer should have evicted the next oldest")
	}
	relNew()
	relNew() // twice is once
	if n := l.open.Len(); n != maxHandshakes-1 {
		t.Fatalf("%d handshakes counted; want %d", n, maxHandshakes-1)
	}
	// The per-address limit still refuses without evicting anyone.
	for range maxHandshakesPerAddress - 1 {
		l.acquire(connFrom("10.2.0.1"))
	}
	closedBefore := 0
	for _, c := range conns {
		if c.closed {
			closedBefore++
		}
	}
	l.acquire(connFrom("10.2.0.1")) // its 10th: fits (evicting the oldest, the gate is full)
	if _, ok := l.acquire(connFrom("10.2.0.1")); ok {
		t.Fatal("an 11th handshake from one address was taken")
	}
	closedAfter := 0
	for _, c := range conns {
		if c.closed {
			closedAfter++
		}
	}
	if closedAfter != closedBefore+1 {
		t.Fatalf("%d handshakes closed by the 10th and the refused 11th; want 1 (a refusal evicts no one)", closedAfter-closedBefore)
	}
}
