package handlers

import (
	"sync"
	"time"
)

// LoginThrottle limits failed logins per username and per client address in
// a sliding window. Unknown usernames are counted like known ones, so the
// throttle reveals nothing about which accounts exist. State is in memory: a
// restart resets it, which is acceptable for a single-server portal.
type LoginThrottle struct {
	mu       sync.Mutex
	perUser  int
	perAddr  int
	window   time.Duration
	failures map[string][]time.Time
	now      func() time.Time
}

// NewLoginThrottle allows perUser failures per username and perAddr per
// client address within window.
func NewLoginThrottle(perUser, perAddr int, window time.Duration) *LoginThrottle {
	return &LoginThrottle{perUser: perUser, perAddr: perAddr, window: window, failures: map[string][]time.Time{}, now: time.Now}
}

// Allowed reports whether a login attempt may be made, and if not, how long
// until it may.
func (t *LoginThrottle) Allowed(username, addr string) (bool, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	wait := time.Duration(0)
	for _, k := range []struct {
		key   string
		limit int
	}{{"u:" + username, t.perUser}, {"a:" + addr, t.perAddr}} {
		fs := t.recent(k.key, now)
		if len(fs) >= k.limit {
			if w := fs[0].Add(t.window).Sub(now); w > wait {
				wait = w
			}
		}
	}
	return wait == 0, wait
}

// Failed records a failed attempt.
func (t *LoginThrottle) Failed(username, addr string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	for _, k := range []string{"u:" + username, "a:" + addr} {
		t.failures[k] = append(t.recent(k, now), now)
	}
}

// Succeeded clears the username's failures (not the address's: one good
// password must not reset an attacker's budget for other accounts).
func (t *LoginThrottle) Succeeded(username string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.failures, "u:"+username)
}

// recent drops entries older than the window; callers hold mu.
func (t *LoginThrottle) recent(key string, now time.Time) []time.Time {
	fs := t.failures[key]
	i := 0
	for i < len(fs) && now.Sub(fs[i]) >= t.window {
		i++
	}
	fs = fs[i:]
	if len(fs) == 0 {
		delete(t.failures, key)
		return nil
	}
	t.failures[key] = fs
	return fs
}
