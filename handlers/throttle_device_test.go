package handlers

import (
	"testing"
	"time"
)

// A browser that logged in as a user is not held back by its address's
// delay, for that user only, until its token is 90 days unused; a new
// login replaces its token.
func TestLoginThrottleTrustsAKnownBrowserForItsUser(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	th := NewLoginThrottle()
	th.now = func() time.Time { return now }
	token := th.TrustDevice("bob", "")
	for i := 0; ; i++ {
		r, _ := th.Reserve("guess"+string(rune('a'+i)), "10.0.0.1")
		if r == nil {
			break
		}
		r.Failed()
	}
	if r, _ := th.ReserveFrom("bob", "10.0.0.1", th.DeviceTrusted("bob", "")); r != nil {
		t.Fatal("a browser without a token passed the address's delay")
	}
	if r, _ := th.ReserveFrom("carol", "10.0.0.1", th.DeviceTrusted("carol", token)); r != nil {
		t.Fatal("bob's token let carol's login past the address's delay")
	}
	r, _ := th.ReserveFrom("bob", "10.0.0.1", th.DeviceTrusted("bob", token))
	if r == nil {
		t.Fatal("bob's known browser was held back by the address's delay")
	}
	r.Succeeded()
	next := th.TrustDevice("bob", token)
	if th.DeviceTrusted("bob", token) || !th.DeviceTrusted("bob", next) {
		t.Fatal("a new login did not replace the browser's token")
	}
	now = now.Add(deviceTrustFor)
	if th.DeviceTrusted("bob", next) {
		t.Fatal("a token unused for 90 days is still trusted")
	}
}
