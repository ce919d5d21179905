package models

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// DefaultHashMemory is the memory, in bytes, that concurrent password
// hashes and checks may take together when the deployment does not choose
// (WORKBENCH_LOGIN_MEMORY_MIB): six checks at the current 19 MiB each.
const DefaultHashMemory = 128 << 20

// DefaultHashWait is how long a login or password confirmation waits for
// room in the gate before it is refused: a class of 20 logging in at the
// same moment (six checks at a time, tens of milliseconds each) all get in
// after a short wait instead of being turned away.
const DefaultHashWait = 10 * time.Second

// ErrHashBusy is a login or password confirmation refused because the hash
// gate stayed full for DefaultHashWait: answered 503 with Retry-After. A
// waiting login holds no hashing memory, only its request.
var ErrHashBusy = errors.New("too many password checks at once")

// hashGate bounds the memory of the argon2id computations running at once,
// weighted by each hash's own memory parameter (an old 64 MiB hash counts
// for 64 MiB until its owner's next login replaces it). Logins and sudo
// confirmations wait for room for a bounded time (first come, first
// served: the semaphore queues waiters in order) and are refused after it;
// creating users and setting passwords wait for room as long as their
// context lives.
type hashGate struct {
	sem     *semaphore.Weighted
	budget  int64
	wait    time.Duration // how long checks wait (DefaultHashWait)
	waiting atomic.Int64  // checks waiting for room now
}

func newHashGate(budget int64) *hashGate {
	if budget <= 0 {
		budget = DefaultHashMemory
	}
	if budget < PasswordCheckMemory() {
		budget = PasswordCheckMemory() // at least one check at a time
	}
	return &hashGate{sem: semaphore.NewWeighted(budget), budget: budget, wait: DefaultHashWait}
}

// weight is n bytes, capped at the budget so that any hash can run alone.
func (g *hashGate) weight(n int64) int64 { return min(n, g.budget) }

func (g *hashGate) tryAcquire(n int64) bool { return g.sem.TryAcquire(g.weight(n)) }

// acquireWithin waits up to g.wait for room. It returns ErrHashBusy when
// the wait ran out and ctx's error when the caller left first (a client
// that went away gives its place up at once).
func (g *hashGate) acquireWithin(ctx context.Context, n int64) error {
	if g.tryAcquire(n) { // fails while others wait: no jumping the queue
		return nil
	}
	if g.wait <= 0 {
		return ErrHashBusy
	}
	g.waiting.Add(1)
	defer g.waiting.Add(-1)
	wctx, cancel := context.WithTimeout(ctx, g.wait)
	defer cancel()
	if err := g.sem.Acquire(wctx, g.weight(n)); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return ErrHashBusy
	}
	return nil
}

func (g *hashGate) acquire(ctx context.Context, n int64) error {
	return g.sem.Acquire(ctx, g.weight(n))
}

func (g *hashGate) release(n int64) { g.sem.Release(g.weight(n)) }

// SetHashMemory sets the memory concurrent password hashes and checks may
// take together (bytes; 0 = DefaultHashMemory). Call it before serving.
// The wait (SetHashWait) is kept.
func (s *Store) SetHashMemory(budget int64) {
	wait := s.hashes.wait
	s.hashes = newHashGate(budget)
	s.hashes.wait = wait
}

// SetHashWait sets how long a login or password confirmation waits for
// room before ErrHashBusy (0 = refused at once). Call it before serving.
func (s *Store) SetHashWait(d time.Duration) { s.hashes.wait = d }

// HashChecksWaiting is how many password checks wait for room now.
func (s *Store) HashChecksWaiting() int64 { return s.hashes.waiting.Load() }

// HoldHashGate takes the whole gate until release is called, so that every
// check waits meanwhile. Tests use it to line logins up behind a full gate
// without depending on how fast the machine hashes.
func (s *Store) HoldHashGate(ctx context.Context) (release func(), err error) {
	g := s.hashes
	if err := g.sem.Acquire(ctx, g.budget); err != nil {
		return nil, err
	}
	return func() { g.sem.Release(g.budget) }, nil
}

// HashSlots is how many checks at the current parameters fit in the gate.
func (s *Store) HashSlots() int64 { return s.hashes.budget / PasswordCheckMemory() }

// hashPassword is HashPassword waiting for room in the gate.
func (s *Store) hashPassword(ctx context.Context, password string) (string, error) {
	n := PasswordCheckMemory()
	if err := s.hashes.acquire(ctx, n); err != nil {
		return "", err
	}
	defer s.hashes.release(n)
	return HashPassword(password)
}
