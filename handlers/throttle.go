package handlers

import (
	"context"
	"strings"
	"sync"
	"time"
)

// LoginThrottle slows password guessing without locking the real user out.
//
// Failures are counted under three keys, each with its own rule:
//   - the client address (any username): 20 free failures, then a delay that
//     doubles from 30 s with every further failure, up to 15 minutes;
//   - the account from that address: 5 free, then the same doubling delay;
//   - the account from anywhere: only far above that (100 failures) does the
//     account lock, from 15 minutes doubling up to a day; an admin can clear
//     it (admin users page, DELETE /api/v1/admin/users/{id}/login-lock).
//
// So an attacker at one address gets a handful of guesses per account and a
// few dozen overall before waiting, while the real user at their own address
// still logs in. An attempt is reserved (counted as a failure) before the
// password is hashed, so a burst of concurrent requests cannot get more
// guesses than the rule allows; a success or an attempt that never hashed
// gives its reservation back. Unknown usernames are counted like known ones,
// so the throttle reveals nothing about which accounts exist. The failure
// counts are in memory: a restart resets them, acceptable for a
// single-server portal.
//
// A browser that logged in as the user before skips the address's delay
// (throttle_device.go): colleagues behind one NAT address were held back
// by someone guessing other accounts from it. Those browsers' tokens are
// kept by the store, so a restart does not forget them.
type LoginThrottle struct {
	mu sync.Mutex
	// settled is closed (and replaced) whenever a reservation is settled:
	// attempts held back only by others still being checked wait on it
	// (ReserveWaiting).
	settled chan struct{}
	addr    throttleRule
	pair    throttleRule
	account throttleRule
	keys    map[string]*failureCount
	devices deviceStore // the trusted browsers' tokens
	now     func() time.Time
}

// throttleRule is one key's policy.
type throttleRule struct {
	free   int           // failures allowed before any delay
	base   time.Duration // delay after the free failures; doubles per further failure
	max    time.Duration // longest delay
	forget time.Duration // a key without failures for this long starts over
}

type failureCount struct {
	n    int
	last time.Time
	// pending counts the reservations among n whose password is still
	// being checked (or waiting for a slot to be checked).
	pending int
}

// NewLoginThrottle returns the portal's throttle with the rules above,
// keeping trusted browsers' tokens in devices.
func NewLoginThrottle(devices deviceStore) *LoginThrottle {
	return &LoginThrottle{
		addr:    throttleRule{free: 20, base: 30 * time.Second, max: 15 * time.Minute, forget: time.Hour},
		pair:    throttleRule{free: 5, base: 30 * time.Second, max: 15 * time.Minute, forget: time.Hour},
		account: throttleRule{free: 100, base: 15 * time.Minute, max: 24 * time.Hour, forget: 24 * time.Hour},
		keys:    map[string]*failureCount{},
		settled: make(chan struct{}),
		devices: devices,
		now:     time.Now,
	}
}

// LoginReservation is one login attempt counted as a failure in advance.
// Exactly one of Failed, Succeeded or Cancel should follow.
type LoginReservation struct {
	t    *LoginThrottle
	keys []string
	at   time.Time
	prev []time.Time // each key's last failure before this reservation
}

func addrKey(addr string) string               { return "a:" + addr }
func pairKey(username, addr string) string     { return "p:" + username + "\x00" + addr }
func accountKey(username string) string        { return "u:" + username }
func pairPrefix(username string) string        { return "p:" + username + "\x00" }
func (t *LoginThrottle) rules() []throttleRule { return []throttleRule{t.addr, t.pair, t.account} }

// Reserve counts an attempt by username from addr as a failure before it is
// made. When any key is still waiting out its delay it reserves nothing and
// returns how long until an attempt may be made.
func (t *LoginThrottle) Reserve(username, addr string) (*LoginReservation, time.Duration) {
	return t.ReserveFrom(username, addr, false)
}

// ReserveFrom is Reserve for an attempt from a browser that logged in as
// username before (trusted: DeviceTrusted): the address's delay does not
// hold it back. Behind a lab's or an office's one NAT address, someone
// guessing other accounts delayed every colleague's right password; the
// guesser has no such browser, and the account's own rules still apply.
func (t *LoginThrottle) ReserveFrom(username, addr string, trusted bool) (*LoginReservation, time.Duration) {
	r, hold := t.ReserveOrHold(username, addr, trusted)
	return r, hold.Wait
}

// LoginHold is why an attempt must wait: how long, and whether what holds
// it back is the address's delay (failures from that address, whatever
// the account) rather than the account's own (its failures from that
// address, or from anywhere).
type LoginHold struct {
	Wait      time.Duration
	ByAddress bool
	// Pending: only attempts still being checked hold it back (had they
	// all been right, there would be no wait); ReserveWaiting waits for
	// them rather than refusing.
	Pending bool
}

// ReserveOrHold is ReserveFrom saying what holds an attempt back: someone
// behind a lab's one NAT address was told "Too many failed attempts"
// without having made one, when others' guesses from the address were
// the cause. Where both hold it, the longer wait is the one told (ties to
// the account's).
func (t *LoginThrottle) ReserveOrHold(username, addr string, trusted bool) (*LoginReservation, LoginHold) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	keys := []string{addrKey(addr), pairKey(username, addr), accountKey(username)}
	var hold LoginHold
	settledHold := false
	for i, k := range keys {
		if i == 0 && trusted {
			continue
		}
		if w := t.waitFor(k, t.rules()[i], now); w > hold.Wait || (w > 0 && w == hold.Wait) {
			hold = LoginHold{Wait: w, ByAddress: i == 0}
		}
		settledHold = settledHold || t.settledWait(k, t.rules()[i], now) > 0
	}
	if hold.Wait > 0 {
		hold.Pending = !settledHold
		return nil, hold
	}
	if len(t.keys) > 50_000 {
		t.prune(now)
	}
	r := &LoginReservation{t: t, keys: keys, at: now}
	for _, k := range keys {
		f := t.keys[k]
		if f == nil {
			f = &failureCount{}
			t.keys[k] = f
		}
		r.prev = append(r.prev, f.last)
		f.n++
		f.pending++
		f.last = now
	}
	return r, LoginHold{}
}

// Failed keeps the reserved failure.
func (r *LoginReservation) Failed() {
	r.t.mu.Lock()
	defer r.t.mu.Unlock()
	for i := range r.keys {
		r.settle(i)
	}
	r.t.wakeWaiting()
}

// Cancel gives the reservation back: the password was never checked.
func (r *LoginReservation) Cancel() {
	r.t.mu.Lock()
	defer r.t.mu.Unlock()
	for i := range r.keys {
		r.settle(i)
		r.giveBack(i)
	}
	r.t.wakeWaiting()
}

// Succeeded gives the reservation back and forgets the account's failures
// from this address (the user proved who they are there). The address's and
// the account-wide counts keep their other failures: one good password must
// not reset an attacker's budget.
func (r *LoginReservation) Succeeded() {
	r.t.mu.Lock()
	defer r.t.mu.Unlock()
	for i := range r.keys {
		r.settle(i)
	}
	r.giveBack(0)
	delete(r.t.keys, r.keys[1])
	r.giveBack(2)
	r.t.wakeWaiting()
}

// settle marks the reservation's i-th key as no longer being checked.
// Callers hold mu.
func (r *LoginReservation) settle(i int) {
	if f := r.t.keys[r.keys[i]]; f != nil && f.pending > 0 {
		f.pending--
	}
}

// wakeWaiting tells the attempts waiting in ReserveWaiting that a
// reservation was settled. Callers hold mu.
func (t *LoginThrottle) wakeWaiting() {
	close(t.settled)
	t.settled = make(chan struct{})
}

// ReserveWaiting is ReserveOrHold for a login that may wait, up to wait or
// until ctx ends, for attempts from its address still being checked.
//
// Attempts are counted as failures before their passwords are checked (so
// a burst cannot get more guesses than the rules allow), which made the
// 21st of a class logging in at once behind one NAT address a 429 for
// 30 s, all of them with the right password. Now an attempt held back only
// by such in-flight reservations waits for them to settle: each right
// password gives its reservation back and lets the next one in, while a
// burst of wrong ones settles into real failures, and the attempts waiting
// behind them are then refused as before. A burst still gets no more
// checks than the rules allow.
func (t *LoginThrottle) ReserveWaiting(ctx context.Context, username, addr string, trusted bool, wait time.Duration) (*LoginReservation, LoginHold) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		t.mu.Lock()
		settled := t.settled
		t.mu.Unlock()
		r, hold := t.ReserveOrHold(username, addr, trusted)
		if r != nil || !hold.Pending {
			return r, hold
		}
		select {
		case <-settled:
		case <-timer.C:
			return nil, hold
		case <-ctx.Done():
			return nil, hold
		}
	}
}

// AccountState reports the account-wide failures counted for username, how
// long its account-wide lock still lasts (0: not locked), and the longest
// delay its logins from any one address still wait (0: none). The delay is
// what a user at their own address meets after 5 wrong passwords (typed at
// the login or in a password confirmation), long before the account locks.
func (t *LoginThrottle) AccountState(username string) (failures int, locked, delayed time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	k := accountKey(username)
	locked = t.waitFor(k, t.account, now)
	if f := t.keys[k]; f != nil {
		failures = f.n
	}
	prefix := pairPrefix(username)
	for pk := range t.keys {
		if strings.HasPrefix(pk, prefix) {
			if w := t.waitFor(pk, t.pair, now); w > delayed {
				delayed = w
			}
		}
	}
	return failures, locked, delayed
}

// ClearAccount forgets every failure counted against username, from any
// address (an admin unlocking an account). It reports whether there was any.
func (t *LoginThrottle) ClearAccount(username string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, had := t.keys[accountKey(username)]
	delete(t.keys, accountKey(username))
	prefix := pairPrefix(username)
	for k := range t.keys {
		if strings.HasPrefix(k, prefix) {
			delete(t.keys, k)
			had = true
		}
	}
	return had
}

// waitFor is how long key must still wait under rule; callers hold mu.
func (t *LoginThrottle) waitFor(key string, rule throttleRule, now time.Time) time.Duration {
	f := t.keys[key]
	if f == nil {
		return 0
	}
	if now.Sub(f.last) >= rule.forget {
		delete(t.keys, key)
		return 0
	}
	if f.n < rule.free {
		return 0
	}
	delay := rule.max
	if shift := f.n - rule.free; shift < 30 {
		if d := rule.base << shift; d < rule.max {
			delay = d
		}
	}
	if w := f.last.Add(delay).Sub(now); w > 0 {
		return w
	}
	return 0
}

// settledWait is waitFor counting only settled failures, not the
// reservations still being checked; callers hold mu.
func (t *LoginThrottle) settledWait(key string, rule throttleRule, now time.Time) time.Duration {
	f := t.keys[key]
	if f == nil || f.pending == 0 {
		return t.waitFor(key, rule, now)
	}
	if f.n-f.pending < rule.free {
		return 0
	}
	saved := f.n
	f.n -= f.pending
	defer func() { f.n = saved }()
	return t.waitFor(key, rule, now)
}

// giveBack undoes the reservation on its i-th key: one failure fewer and,
// unless a later failure came since, the delay counted from the one before.
// Callers hold mu.
func (r *LoginReservation) giveBack(i int) {
	f := r.t.keys[r.keys[i]]
	if f == nil {
		return
	}
	if f.n--; f.n <= 0 {
		delete(r.t.keys, r.keys[i])
		return
	}
	// Failures or reservations are still counted: a first reservation
	// (nothing before it) that shared its instant with later ones must
	// not reset the time to zero, which forgot the key and its count.
	if f.last.Equal(r.at) && !r.prev[i].IsZero() {
		f.last = r.prev[i]
	}
}

// prune drops keys no rule remembers any more; callers hold mu.
func (t *LoginThrottle) prune(now time.Time) {
	for k, f := range t.keys {
		rule := t.account
		if !strings.HasPrefix(k, "u:") {
			rule = t.addr // addr and pair forget alike
		}
		if now.Sub(f.last) >= rule.forget {
			delete(t.keys, k)
		}
	}
}
