package sshgate

import (
	"fmt"
	"net"
	"testing"
	"time"
)

// An address gets verifyFailuresAllowed wrong codes per window, counted
// once per code per connection, given back when a code is right; an IPv6
// client is counted by its /64.
func TestVerifyThrottle(t *testing.T) {
	now := time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)
	th := newVerifyThrottle(func() time.Time { return now })
	addr := &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 50022}

	c := th.tries(addr)
	for range 3 { // three keys offered with one code: one attempt
		if ok, _ := c.admit("aaaaaaaaaa"); !ok {
			t.Fatal("the first code refused")
		}
	}
	c.admit("bbbbbbbbbb")
	c.matched("bbbbbbbbbb") // right: given back
	for i := 2; i <= verifyFailuresAllowed; i++ {
		now = now.Add(time.Second)
		if ok, _ := th.tries(addr).admit("cccccccccc"); !ok {
			t.Fatalf("attempt %d refused; want %d allowed", i, verifyFailuresAllowed)
		}
	}
	other := th.tries(&net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 50023})
	if ok, wait := other.admit("dddddddddd"); ok || wait != verifyFailureWindow-time.Duration(verifyFailuresAllowed-1)*time.Second {
		t.Fatalf("attempt %d from the same address (another port): %v, wait %v; want refused until the first failure is %v old", verifyFailuresAllowed+1, ok, wait, verifyFailureWindow)
	}
	// A right code from the same address is refused too: nothing is looked up.
	if ok, _ := other.admit("bbbbbbbbbb"); ok {
		t.Fatal("a code was admitted past the limit")
	}
	if ok, _ := th.tries(&net.TCPAddr{IP: net.ParseIP("192.0.2.8"), Port: 1}).admit("eeeeeeeeee"); !ok {
		t.Fatal("another address refused")
	}
	now = now.Add(verifyFailureWindow - time.Duration(verifyFailuresAllowed-1)*time.Second)
	if ok, _ := other.admit("dddddddddd"); !ok {
		t.Fatal("still refused once the oldest failure left the window")
	}
	if ok, _ := th.tries(addr).admit("ffffffffff"); ok {
		t.Fatal("a second attempt admitted though only one failure left the window")
	}

	v6 := func(ip string) *verifyTries { return th.tries(&net.TCPAddr{IP: net.ParseIP(ip), Port: 22}) }
	for i := range verifyFailuresAllowed {
		if ok, _ := v6(fmt.Sprintf("2001:db8:1:2::%x", i+1)).admit("gggggggggg"); !ok {
			t.Fatalf("IPv6 attempt %d refused", i+1)
		}
	}
	if ok, _ := v6("2001:db8:1:2:ffff::1").admit("gggggggggg"); ok {
		t.Fatal("another address of the same /64 admitted past the limit")
	}
	if ok, _ := v6("2001:db8:1:3::1").admit("gggggggggg"); !ok {
		t.Fatal("another /64 refused")
	}
}
