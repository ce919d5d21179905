package handlers

import (
	"sync"
	"time"
)

// proxyAuthTTL is how long the proxy trusts a session→user lookup. A
// notebook makes many requests a second; looking the session up (and
// decoding it) each time was most of the proxy's cost. Logout removes the
// entry at once; disabling a user takes effect within the TTL.
const proxyAuthTTL = 2 * time.Second

type proxyAuthEntry struct {
	userID int64
	until  time.Time
}

// proxyAuthCache maps a session token to its user for proxyAuthTTL.
type proxyAuthCache struct {
	mu sync.Mutex
	m  map[string]proxyAuthEntry
}

func newProxyAuthCache() *proxyAuthCache { return &proxyAuthCache{m: map[string]proxyAuthEntry{}} }

func (c *proxyAuthCache) get(token string, now time.Time) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[token]
	if !ok || now.After(e.until) {
		return 0, false
	}
	return e.userID, true
}

func (c *proxyAuthCache) put(token string, userID int64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) > 10000 { // bound memory: drop expired entries
		for k, e := range c.m {
			if now.After(e.until) {
				delete(c.m, k)
			}
		}
	}
	c.m[token] = proxyAuthEntry{userID: userID, until: now.Add(proxyAuthTTL)}
}

func (c *proxyAuthCache) forget(token string) {
	c.mu.Lock()
	delete(c.m, token)
	c.mu.Unlock()
}
