package sshgate

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"workbench/models"
)

// An address gets verifyFailuresAllowed wrong codes per window, counted
// once per code per connection, given back when a code is right; an IPv6
// client is counted by its /64. The counts are the store's: a throttle
// made anew on the same database file (a restarted portal) goes on with
// them.
func TestVerifyThrottle(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := models.Open(ctx, dir, log)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	th := newVerifyThrottle(store, clock)
	addr := &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 50022}
	admit := func(v *verifyTries, code string) (bool, time.Duration) {
		t.Helper()
		ok, wait, err := v.admit(ctx, code)
		if err != nil {
			t.Fatal(err)
		}
		return ok, wait
	}

	c := th.tries(addr)
	for range 3 { // three keys offered with one code: one attempt
		if ok, _ := admit(c, "aaaaaaaaaa"); !ok {
			t.Fatal("the first code refused")
		}
	}
	admit(c, "bbbbbbbbbb")
	if err := c.matched(ctx, "bbbbbbbbbb"); err != nil { // right: given back
		t.Fatal(err)
	}
	for i := 2; i <= verifyFailuresAllowed; i++ {
		now = now.Add(time.Second)
		if i == verifyFailuresAllowed/2 { // the portal restarts
			store.Close()
			if store, err = models.Open(ctx, dir, log); err != nil {
				t.Fatal(err)
			}
			th = newVerifyThrottle(store, clock)
		}
		if ok, _ := admit(th.tries(addr), "cccccccccc"); !ok {
			t.Fatalf("attempt %d refused; want %d allowed", i, verifyFailuresAllowed)
		}
	}
	defer store.Close()
	other := th.tries(&net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 50023})
	if ok, wait := admit(other, "dddddddddd"); ok || wait != verifyFailureWindow-time.Duration(verifyFailuresAllowed-1)*time.Second {
		t.Fatalf("attempt %d from the same address (another port): %v, wait %v; want refused until the first failure is %v old", verifyFailuresAllowed+1, ok, wait, verifyFailureWindow)
	}
	// A right code from the same address is refused too: nothing is looked up.
	if ok, _ := admit(other, "bbbbbbbbbb"); ok {
		t.Fatal("a code was admitted past the limit")
	}
	if ok, _ := admit(th.tries(&net.TCPAddr{IP: net.ParseIP("192.0.2.8"), Port: 1}), "eeeeeeeeee"); !ok {
		t.Fatal("another address refused")
	}
	now = now.Add(verifyFailureWindow - time.Duration(verifyFailuresAllowed-1)*time.Second)
	if ok, _ := admit(other, "dddddddddd"); !ok {
		t.Fatal("still refused once the oldest failure left the window")
	}
	if ok, _ := admit(th.tries(addr), "ffffffffff"); ok {
		t.Fatal("a second attempt admitted though only one failure left the window")
	}

	v6 := func(ip string) *verifyTries { return th.tries(&net.TCPAddr{IP: net.ParseIP(ip), Port: 22}) }
	for i := range verifyFailuresAllowed {
		if ok, _ := admit(v6(fmt.Sprintf("2001:db8:1:2::%x", i+1)), "gggggggggg"); !ok {
			t.Fatalf("IPv6 attempt %d refused", i+1)
		}
	}
	if ok, _ := admit(v6("2001:db8:1:2:ffff::1"), "gggggggggg"); ok {
		t.Fatal("another address of the same /64 admitted past the limit")
	}
	if ok, _ := admit(v6("2001:db8:1:3::1"), "gggggggggg"); !ok {
		t.Fatal("another /64 refused")
	}
}
