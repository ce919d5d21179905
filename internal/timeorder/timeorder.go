// Package timeorder holds the later and the earlier of two instants:
// time.Time is not ordered, so Go's built-in min and max do not take it,
// and models, orchestrator and the simulator each kept a copy of these.
package timeorder

import "time"

// Max is the later of a and b (b when they are the same instant).
func Max(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Min is the earlier of a and b (b when they are the same instant).
func Min(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
