package models

import (
	"context"
	"errors"

	"golang.org/x/sync/semaphore"
)

// DefaultHashMemory is the memory, in bytes, that concurrent password
// hashes and checks may take together when the deployment does not choose
// (WORKBENCH_LOGIN_MEMORY_MIB): six checks at the current 19 MiB each.
const DefaultHashMemory = 128 << 20

// ErrHashBusy is a login or password confirmation refused at once because
// the hash gate is full: answered 503 with Retry-After, never queued, so a
// burst of logins holds no memory while it waits.
var ErrHashBusy = errors.New("too many password checks at once")

// hashGate bounds the memory of the argon2id computations running at once,
// weighted by each hash's own memory parameter (an old 64 MiB hash counts
// for 64 MiB until its owner's next login replaces it). Logins and sudo
// confirmations try it and are refused when it is full (the login
// defences); creating users and setting passwords wait for room.
type hashGate struct {
	sem    *semaphore.Weighted
	budget int64
}

func newHashGate(budget int64) *hashGate {
	if budget <= 0 {
		budget = DefaultHashMemory
	}
	if budget < PasswordCheckMemory() {
		budget = PasswordCheckMemory() // at least one check at a time
	}
	return &hashGate{sem: semaphore.NewWeighted(budget), budget: budget}
}

// weight is n bytes, capped at the budget so that any hash can run alone.
func (g *hashGate) weight(n int64) int64 { return min(n, g.budget) }

func (g *hashGate) tryAcquire(n int64) bool { return g.sem.TryAcquire(g.weight(n)) }

func (g *hashGate) acquire(ctx context.Context, n int64) error {
	return g.sem.Acquire(ctx, g.weight(n))
}

func (g *hashGate) release(n int64) { g.sem.Release(g.weight(n)) }

// SetHashMemory sets the memory concurrent password hashes and checks may
// take together (bytes; 0 = DefaultHashMemory). Call it before serving.
func (s *Store) SetHashMemory(budget int64) { s.hashes = newHashGate(budget) }

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
