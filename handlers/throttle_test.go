package handlers

import (
	"testing"
	"time"
)

func TestLoginThrottle(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	th := NewLoginThrottle(3, 5, 10*time.Minute)
	th.now = func() time.Time { return now }

	for i := 0; i < 3; i++ {
		if ok, _ := th.Allowed("alice", "10.0.0.1"); !ok {
			t.Fatalf("attempt %d refused early", i)
		}
		th.Failed("alice", "10.0.0.1")
	}
	ok, wait := th.Allowed("alice", "10.0.0.2")
	if ok || wait != 10*time.Minute {
		t.Fatalf("per-user limit: ok=%v wait=%v", ok, wait)
	}
	// Other users from the same address still have budget (5 per address).
	if ok, _ := th.Allowed("bob", "10.0.0.1"); !ok {
		t.Fatal("bob refused before the address limit")
	}
	th.Failed("bob", "10.0.0.1")
	th.Failed("carol", "10.0.0.1")
	if ok, _ := th.Allowed("dave", "10.0.0.1"); ok {
		t.Fatal("per-address limit not applied across usernames")
	}
	// Success clears the user's count but not the address's.
	th.Succeeded("alice")
	if ok, _ := th.Allowed("alice", "10.0.0.9"); !ok {
		t.Fatal("alice still throttled after success")
	}
	if ok, _ := th.Allowed("alice", "10.0.0.1"); ok {
		t.Fatal("address budget reset by one success")
	}
	// The window slides.
	now = now.Add(10*time.Minute + time.Second)
	if ok, _ := th.Allowed("dave", "10.0.0.1"); !ok {
		t.Fatal("still throttled after the window")
	}
}
