package sshgate

import (
	"net"
	"sync"
	"time"
)

// Verify attempts are limited per client address. Connecting as
// verify-<code> with a key's public half tells, before any signature,
// whether the code is that key's pending one: guessing a 50-bit code is
// hopeless, but unbounded guesses are not to be offered. So an address
// may try verifyFailuresAllowed codes that name no pending key within
// verifyFailureWindow; beyond that every verify-… connection from it is
// answered "too many verification attempts" without the code being
// looked up, until its oldest counted failure is that old.
//
// This takes handlers.LoginThrottle's approach, not its code: counts are
// kept in memory (a restart forgets them, acceptable for one portal
// process), an attempt is counted as failed before the code is looked up
// and given back when the code turns out right (so a burst of concurrent
// connections gets no more tries than the limit), and the count is kept
// by address, never by account (a wrong code names none, and a right one
// is no guess). Its rules do not fit: an account-wide lock and doubling
// delays are for one account's password, and sharing its counts would
// let code guessing slow down web logins from the same address. An IPv6
// client is counted by its /64, which one host usually has whole.
const (
	verifyFailuresAllowed = 10
	verifyFailureWindow   = 10 * time.Minute
)

// verifyThrottle counts failed verify attempts by address.
type verifyThrottle struct {
	mu    sync.Mutex
	fails map[string][]time.Time // address → failures within the window, oldest first
	now   func() time.Time
}

func newVerifyThrottle(now func() time.Time) *verifyThrottle {
	return &verifyThrottle{fails: map[string][]time.Time{}, now: now}
}

// throttleKey is the address a client's attempts are counted under.
func throttleKey(addr net.Addr) string {
	host := addr.String()
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return host
	case ip.To4() != nil:
		return ip.To4().String()
	default:
		return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
}

// reserve counts one attempt from key as failed before it is made. When
// key has used up its attempts it counts nothing and returns false and how
// long until the oldest counted failure leaves the window.
func (t *verifyThrottle) reserve(key string) (at time.Time, ok bool, wait time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if len(t.fails) > 50_000 {
		t.prune(now)
	}
	list := t.recent(key, now)
	if len(list) >= verifyFailuresAllowed {
		return time.Time{}, false, list[0].Add(verifyFailureWindow).Sub(now)
	}
	t.fails[key] = append(list, now)
	return now, true, 0
}

// giveBack undoes the reservation made at at: the attempt did not fail.
func (t *verifyThrottle) giveBack(key string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	list := t.fails[key]
	for i := len(list) - 1; i >= 0; i-- {
		if list[i].Equal(at) {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(t.fails, key)
		return
	}
	t.fails[key] = list
}

// recent is key's failures still within the window; callers hold mu.
func (t *verifyThrottle) recent(key string, now time.Time) []time.Time {
	list := t.fails[key]
	i := 0
	for i < len(list) && now.Sub(list[i]) >= verifyFailureWindow {
		i++
	}
	return list[i:]
}

// prune forgets addresses whose failures all left the window; callers
// hold mu.
func (t *verifyThrottle) prune(now time.Time) {
	for k := range t.fails {
		if len(t.recent(k, now)) == 0 {
			delete(t.fails, k)
		}
	}
}

// verifyTries is one connection's verify attempts: each code it tries is
// counted once against its address, however many keys it offers with it
// (a client tries each key of its agent in turn), and given back once a
// key it offers with the code is that code's pending key. The SSH server
// asks the authentication callback of one connection one request at a
// time, so it needs no lock of its own.
type verifyTries struct {
	t     *verifyThrottle
	key   string
	codes map[string]verifyTry
}

type verifyTry struct {
	at      time.Time
	matched bool
}

func (t *verifyThrottle) tries(addr net.Addr) *verifyTries {
	return &verifyTries{t: t, key: throttleKey(addr), codes: map[string]verifyTry{}}
}

// admit counts code as a failed attempt unless this connection already
// has; false (and how long to wait) when the address has no attempts
// left.
func (v *verifyTries) admit(code string) (bool, time.Duration) {
	if _, seen := v.codes[code]; seen {
		return true, 0
	}
	at, ok, wait := v.t.reserve(v.key)
	if ok {
		v.codes[code] = verifyTry{at: at}
	}
	return ok, wait
}

// matched gives code's count back: it named a pending key.
func (v *verifyTries) matched(code string) {
	if c, ok := v.codes[code]; ok && !c.matched {
		v.t.giveBack(v.key, c.at)
		v.codes[code] = verifyTry{at: c.at, matched: true}
	}
}
