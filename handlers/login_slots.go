package handlers

import "workbench/models"

// DefaultLoginMemory is the memory, in bytes, that concurrent password checks
// may take together when the deployment does not choose
// (WORKBENCH_LOGIN_MEMORY_MIB): two checks at the default 64 MiB each.
const DefaultLoginMemory = 128 << 20

// hashSlots bounds how many password checks run at once. Each argon2id check
// allocates its full memory parameter, so an unbounded burst of logins is a
// memory bomb; a request that finds no free slot is refused at once (503
// with Retry-After) rather than queued, so waiting requests hold no memory
// and cannot pile up either.
type hashSlots chan struct{}

// newHashSlots sizes the bound from a memory budget and the configured
// argon2id parameters: budget / memory per check, at least one.
func newHashSlots(budget int64) hashSlots {
	if budget <= 0 {
		budget = DefaultLoginMemory
	}
	n := budget / models.PasswordCheckMemory()
	if n < 1 {
		n = 1
	}
	return make(hashSlots, n)
}

// tryAcquire takes a slot if one is free, without waiting.
func (s hashSlots) tryAcquire() bool {
	select {
	case s <- struct{}{}:
		return true
	default:
		return false
	}
}

func (s hashSlots) release() { <-s }
