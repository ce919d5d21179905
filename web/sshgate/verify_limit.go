package sshgate

import (
	"context"
	"net"
	"time"

	"workbench/models"
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
// This takes handlers.LoginThrottle's approach, not its code: an attempt
// is counted as failed before the code is looked up and given back when
// the code turns out right (so a burst of concurrent connections gets no
// more tries than the limit), and the count is kept by address, never by
// account (a wrong code names none, and a right one is no guess). Its
// rules do not fit: an account-wide lock and doubling delays are for one
// account's password, and sharing its counts would let code guessing slow
// down web logins from the same address. An IPv6 client is counted by
// its /64, which one host usually has whole.
//
// The counts are rows of the database (models.ReserveSSHVerifyAttempt),
// not the gate's memory: kept there, a restart or an upgrade of the
// portal no longer gave a guesser a fresh set of tries. They are read and
// written once per verify attempt only, swept with expired sessions.
const (
	verifyFailuresAllowed = models.SSHVerifyFailuresAllowed
	verifyFailureWindow   = models.SSHVerifyFailureWindow
)

// verifyThrottle counts failed verify attempts by address, in the store,
// on the gate's clock (the manager's: tests move it).
type verifyThrottle struct {
	store *models.Store
	now   func() time.Time
}

func newVerifyThrottle(store *models.Store, now func() time.Time) *verifyThrottle {
	return &verifyThrottle{store: store, now: now}
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
	id      int64 // the reservation (models.ReserveSSHVerifyAttempt)
	matched bool
}

func (t *verifyThrottle) tries(addr net.Addr) *verifyTries {
	return &verifyTries{t: t, key: throttleKey(addr), codes: map[string]verifyTry{}}
}

// admit counts code as a failed attempt unless this connection already
// has; false (and how long to wait) when the address has no attempts
// left.
func (v *verifyTries) admit(ctx context.Context, code string) (bool, time.Duration, error) {
	if _, seen := v.codes[code]; seen {
		return true, 0, nil
	}
	id, wait, err := v.t.store.ReserveSSHVerifyAttempt(ctx, v.key, v.t.now())
	if err != nil || id == 0 {
		return false, wait, err
	}
	v.codes[code] = verifyTry{id: id}
	return true, 0, nil
}

// matched gives code's count back: it named a pending key (or the
// portal, not the code, failed).
func (v *verifyTries) matched(ctx context.Context, code string) error {
	c, ok := v.codes[code]
	if !ok || c.matched {
		return nil
	}
	v.codes[code] = verifyTry{id: c.id, matched: true}
	return v.t.store.GiveBackSSHVerifyAttempt(ctx, c.id)
}
