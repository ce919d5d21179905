package sshgate

import (
	"net"
	"sync"
)

// Connections still in their handshake are limited, per client address and
// in all, as OpenSSH's MaxStartups limits them. Before authentication a
// client costs the gate a goroutine for up to the 30 s handshake deadline,
// a key exchange, and a database lookup for each of up to MaxAuthTries
// keys it offers (UserBySSHKey): without a bound anyone who can reach the
// port could hold thousands of them open and keep the portal's one SQLite
// database busy for every web user. A connection over either limit is
// closed at once, before the server's banner; authenticated connections
// do not count, so open sessions never block a new one.
//
// The numbers leave room for real use: a handshake takes milliseconds, and
// a client opens one at a time (VS Code Remote-SSH a few), so 10 at once
// from one address (an IPv6 client's /64, as the verify throttle counts
// it) is a lab behind one NAT address connecting together, not one person.
const (
	maxHandshakesPerAddress = 10
	maxHandshakes           = 100
)

// handshakeLimit counts the connections in their handshake.
type handshakeLimit struct {
	mu     sync.Mutex
	total  int
	byAddr map[string]int
}

func newHandshakeLimit() *handshakeLimit {
	return &handshakeLimit{byAddr: map[string]int{}}
}

// acquire takes a handshake slot for a client at addr; ok is false when
// either limit is reached. Call release once the handshake has ended,
// however it ended.
func (l *handshakeLimit) acquire(addr net.Addr) (release func(), ok bool) {
	key := throttleKey(addr)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.total >= maxHandshakes || l.byAddr[key] >= maxHandshakesPerAddress {
		return nil, false
	}
	l.total++
	l.byAddr[key]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.total--
			if l.byAddr[key]--; l.byAddr[key] <= 0 {
				delete(l.byAddr, key)
			}
		})
	}, true
}
