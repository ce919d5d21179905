package proxy

import (
	"context"
	"sync"
	"time"
)

// Live tracks the proxied requests in flight (long polls, streams and
// WebSocket tunnels above all) per user and per grant (the session they
// were authenticated by), so that revoking access ends them at once rather
// than when the browser happens to close them. Cancelling a request's
// context makes ReverseProxy close both ends of a tunnel. It also knows
// each request's workbench, so that a workbench that stops ends its
// downloads at once (CloseWorkbench).
type Live struct {
	mu    sync.Mutex
	conns map[*liveConn]struct{}
	// Revocations remembered for a minute, so that a request resolved just
	// before a revocation but registered just after it is ended too.
	users  map[int64]time.Time
	grants map[string]time.Time
	wbs    map[string]time.Time
}

type liveConn struct {
	user   int64
	grant  string
	wb     string // the workbench proxied to; "" for a request that is not proxied
	cancel context.CancelFunc
}

// revocationMemory bounds how long a revocation is remembered; Resolve and
// the registration that follows it take microseconds.
const revocationMemory = time.Minute

// NewLive returns an empty registry.
func NewLive() *Live {
	return &Live{conns: map[*liveConn]struct{}{}, users: map[int64]time.Time{}, grants: map[string]time.Time{}, wbs: map[string]time.Time{}}
}

// add registers a request to workbench wb authenticated at started; it is
// cancelled at once if a matching revocation (or the workbench's stop)
// came after started. The returned func unregisters it.
func (l *Live) add(user int64, grant, wb string, started time.Time, cancel context.CancelFunc) func() {
	c := &liveConn{user: user, grant: grant, wb: wb, cancel: cancel}
	l.mu.Lock()
	if at, ok := l.users[user]; ok && !at.Before(started) {
		l.mu.Unlock()
		cancel()
		return func() {}
	}
	if at, ok := l.grants[grant]; ok && grant != "" && !at.Before(started) {
		l.mu.Unlock()
		cancel()
		return func() {}
	}
	if at, ok := l.wbs[wb]; ok && wb != "" && !at.Before(started) {
		l.mu.Unlock()
		cancel()
		return func() {}
	}
	l.conns[c] = struct{}{}
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		delete(l.conns, c)
		l.mu.Unlock()
	}
}

// Track registers a long-lived request that is not proxied (a followed
// log, an event stream) under user and grant, so that revocation ends it as
// it ends the proxied ones: the returned context is cancelled then. started
// is when the request was authenticated; stop unregisters it.
func (l *Live) Track(ctx context.Context, user int64, grant string, started time.Time) (_ context.Context, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	remove := l.add(user, grant, "", started, cancel)
	return ctx, func() { remove(); cancel() }
}

// CloseUserGrants ends a user's requests whose grant match accepts and
// returns how many: a password change ends the user's sessions but not
// their tokens. It remembers no revocation (a request resolved under a
// grant this ends is refused by its next lookup, the grants being gone from
// the database), unlike CloseUser and CloseGrant.
func (l *Live) CloseUserGrants(user int64, match func(grant string) bool) int {
	return l.close(func(c *liveConn) bool { return c.user == user && match(c.grant) }, func(time.Time) {})
}

// CloseUser ends every proxied request of a user and returns how many.
func (l *Live) CloseUser(user int64) int {
	return l.close(func(c *liveConn) bool { return c.user == user }, func(now time.Time) { l.users[user] = now })
}

// CloseGrant ends every proxied request authenticated by grant (a portal
// session, and the notebook sessions made from it).
func (l *Live) CloseGrant(grant string) int {
	if grant == "" {
		return 0
	}
	return l.close(func(c *liveConn) bool { return c.grant == grant }, func(now time.Time) { l.grants[grant] = now })
}

// CloseWorkbench ends every proxied request to workbench id and returns
// how many: the portal calls it when the workbench leaves the running
// state. Without it a download cut by a stop could hang for minutes: a
// stopped container's network goes away with data still queued, its
// connection's end never reaches the portal, and only TCP keepalive
// finds it gone (a client reading at 2 MiB/s waited 166 s after the
// stop before its download ended).
func (l *Live) CloseWorkbench(id string) int {
	if id == "" {
		return 0
	}
	return l.close(func(c *liveConn) bool { return c.wb == id }, func(now time.Time) { l.wbs[id] = now })
}

// Count is the number of a user's proxied requests in flight.
func (l *Live) Count(user int64) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for c := range l.conns {
		if c.user == user {
			n++
		}
	}
	return n
}

func (l *Live) close(match func(*liveConn) bool, remember func(time.Time)) int {
	now := time.Now()
	l.mu.Lock()
	for u, at := range l.users {
		if now.Sub(at) > revocationMemory {
			delete(l.users, u)
		}
	}
	for g, at := range l.grants {
		if now.Sub(at) > revocationMemory {
			delete(l.grants, g)
		}
	}
	for id, at := range l.wbs {
		if now.Sub(at) > revocationMemory {
			delete(l.wbs, id)
		}
	}
	remember(now)
	var ended []*liveConn
	for c := range l.conns {
		if match(c) {
			ended = append(ended, c)
			delete(l.conns, c)
		}
	}
	l.mu.Unlock()
	for _, c := range ended {
		c.cancel()
	}
	return len(ended)
}
