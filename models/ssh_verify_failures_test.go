package models

import (
	"context"
	"testing"
	"time"
)

// An address's failed verify attempts: SSHVerifyFailuresAllowed within the
// window, the next refused with the wait until the oldest leaves it; a
// reservation given back frees its attempt; the sweep (on the store's
// clock) removes only failures past the window.
func TestSSHVerifyFailures(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	start := time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)
	now := start
	var last int64
	for i := range SSHVerifyFailuresAllowed {
		now = start.Add(time.Duration(i) * time.Second)
		id, wait, err := s.ReserveSSHVerifyAttempt(ctx, "192.0.2.7", now)
		if err != nil || id == 0 || wait != 0 {
			t.Fatalf("attempt %d: %d %v %v", i+1, id, wait, err)
		}
		last = id
	}
	id, wait, err := s.ReserveSSHVerifyAttempt(ctx, "192.0.2.7", now)
	if err != nil || id != 0 || wait != SSHVerifyFailureWindow-time.Duration(SSHVerifyFailuresAllowed-1)*time.Second {
		t.Fatalf("past the limit: %d %v %v; want refused until the first failure is %v old", id, wait, err, SSHVerifyFailureWindow)
	}
	if id, _, _ := s.ReserveSSHVerifyAttempt(ctx, "192.0.2.8", now); id == 0 {
		t.Fatal("another address refused")
	}
	if err := s.GiveBackSSHVerifyAttempt(ctx, last); err != nil {
		t.Fatal(err)
	}
	if id, _, _ := s.ReserveSSHVerifyAttempt(ctx, "192.0.2.7", now); id == 0 {
		t.Fatal("a reservation given back did not free its attempt")
	}

	s.SetClock(func() time.Time { return start.Add(SSHVerifyFailureWindow + time.Second) })
	if n, err := s.DeleteOldSSHVerifyFailures(ctx); err != nil || n != 2 {
		t.Fatalf("sweep: %d %v; want the 2 failures over %v old", n, err, SSHVerifyFailureWindow)
	}
}
