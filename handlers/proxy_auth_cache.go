package handlers

import (
	"sync"
	"time"
)

// proxyAuthTTL is how long the proxy trusts a session→user lookup. A
// notebook makes many requests a second; looking the session up (and
// decoding it) each time was most of the proxy's cost. Logout removes the
// entry at once, and so does revoking a user's access (forgetUser).
const proxyAuthTTL = 2 * time.Second

type proxyAuthEntry struct {
	userID int64
	grant  string // the portal session's hash: what logout ends
	wbID   string // notebook sessions only: the one workbench they open
	at     time.Time
	until  time.Time
}

// proxyAuthCache maps a session token to its user for proxyAuthTTL.
type proxyAuthCache struct {
	mu sync.Mutex
	m  map[string]proxyAuthEntry
	// revoked[user] is when the user's access was last revoked: entries
	// looked up before then are not believed, even if stored after.
	revoked map[int64]time.Time
}

func newProxyAuthCache() *proxyAuthCache {
	return &proxyAuthCache{m: map[string]proxyAuthEntry{}, revoked: map[int64]time.Time{}}
}

func (c *proxyAuthCache) get(token string, now time.Time) (proxyAuthEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[token]
	if !ok || now.After(e.until) {
		return proxyAuthEntry{}, false
	}
	if r, ok := c.revoked[e.userID]; ok && !e.at.After(r) {
		delete(c.m, token)
		return proxyAuthEntry{}, false
	}
	return e, true
}

// put stores a lookup made at lookedUp (taken before the lookup began).
func (c *proxyAuthCache) put(token string, e proxyAuthEntry, lookedUp time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) > 10000 { // bound memory: drop expired entries
		for k, old := range c.m {
			if lookedUp.After(old.until) {
				delete(c.m, k)
			}
		}
	}
	if r, ok := c.revoked[e.userID]; ok && !lookedUp.After(r) {
		return
	}
	e.at, e.until = lookedUp, lookedUp.Add(proxyAuthTTL)
	c.m[token] = e
}

func (c *proxyAuthCache) forget(token string) {
	c.mu.Lock()
	delete(c.m, token)
	c.mu.Unlock()
}

// forgetUser drops every entry of a user and refuses lookups that started
// before now.
func (c *proxyAuthCache) forgetUser(userID int64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.m {
		if e.userID == userID {
			delete(c.m, k)
		}
	}
	for u, at := range c.revoked { // bounded: nothing older than a TTL matters
		if now.Sub(at) > time.Minute {
			delete(c.revoked, u)
		}
	}
	c.revoked[userID] = now
}

// forgetGrant drops every entry made from one portal session (its own and
// those of the notebook sessions it opened).
func (c *proxyAuthCache) forgetGrant(grant string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.m {
		if e.grant == grant {
			delete(c.m, k)
		}
	}
}
