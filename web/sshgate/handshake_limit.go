package sshgate

import (
	"container/list"
	"net"
	"sync"
)

// Connections still in their handshake are limited, per client address and
// in all, as OpenSSH's MaxStartups limits them. Before authentication a
// client costs the gate a goroutine for up to the 30 s handshake deadline,
// a key exchange, and a database lookup for each of up to MaxAuthTries
// keys it offers (UserBySSHKey): without a bound anyone who can reach the
// port could hold thousands of them open and keep the portal's one SQLite
// database busy for every web user. A connection over its address's limit
// is closed at once, before the server's banner; authenticated connections
// do not count, so open sessions never block a new one.
//
// The numbers leave room for real use: a handshake takes milliseconds, and
// a client opens one at a time (VS Code Remote-SSH a few), so 10 at once
// from one address (an IPv6 client's /64, as the verify throttle counts
// it) is a lab behind one NAT address connecting together, not one person.
//
// When all 100 are taken, a new connection (from an address under its own
// limit) closes the handshake that has been open longest instead of being
// refused. A flood from many addresses that just holds connections open
// would otherwise lock everyone out for as long as it cares to, at the
// cost of a few connections a second (one per slot per 30 s); now it must
// open connections faster than real handshakes finish to keep one out,
// and what it loses first is its own oldest connection. A person's
// handshake is only cut when the gate is flooded and theirs is the oldest
// (an ssh client waiting for its key's passphrase, say).
const (
	maxHandshakesPerAddress = 10
	maxHandshakes           = 100
)

// handshakeLimit counts the connections in their handshake, oldest first.
type handshakeLimit struct {
	mu     sync.Mutex
	open   *list.List // of *handshake, in the order they were accepted
	byAddr map[string]int
}

// handshake is one connection in its handshake; done once its slot was
// given back (release) or taken by a newer connection (eviction).
type handshake struct {
	conn net.Conn
	key  string
	done bool
}

func newHandshakeLimit() *handshakeLimit {
	return &handshakeLimit{open: list.New(), byAddr: map[string]int{}}
}

// acquire takes a handshake slot for nc; ok is false when its address's
// limit is reached. With every slot taken it closes the oldest handshake
// to make room. Call release once the handshake has ended, however it
// ended.
func (l *handshakeLimit) acquire(nc net.Conn) (release func(), ok bool) {
	h := &handshake{conn: nc, key: throttleKey(nc.RemoteAddr())}
	l.mu.Lock()
	if l.byAddr[h.key] >= maxHandshakesPerAddress {
		l.mu.Unlock()
		return nil, false
	}
	var evicted net.Conn
	if l.open.Len() >= maxHandshakes {
		oldest := l.open.Front()
		old := oldest.Value.(*handshake)
		l.drop(oldest, old)
		evicted = old.conn
	}
	e := l.open.PushBack(h)
	l.byAddr[h.key]++
	l.mu.Unlock()
	if evicted != nil {
		evicted.Close() // its handshake fails; its release finds it done
	}
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if !h.done {
			l.drop(e, h)
		}
	}, true
}

// drop gives back h's slot; l.mu is held.
func (l *handshakeLimit) drop(e *list.Element, h *handshake) {
	h.done = true
	l.open.Remove(e)
	if l.byAddr[h.key]--; l.byAddr[h.key] <= 0 {
		delete(l.byAddr, h.key)
	}
}
