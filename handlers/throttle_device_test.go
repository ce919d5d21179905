package handlers

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"workbench/models"
)

// A browser that logged in as a user is not held back by its address's
// delay, for that user only, until its token is 90 days old; a new login
// replaces its token. The tokens are the store's: a throttle made anew on
// the same database file (a restarted portal) still knows the browser,
// and the file holds no token.
func TestLoginThrottleTrustsAKnownBrowserForItsUser(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, err := models.Open(ctx, dir, log)
	if err != nil {
		t.Fatal(err)
	}
	bob, err := store.CreateUser(ctx, models.NewUser{Username: "bob", Password: "bob-password", Role: models.RoleUser})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateUser(ctx, models.NewUser{Username: "carol", Password: "carol-password", Role: models.RoleUser}); err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 0)
	th := NewLoginThrottle(store)
	th.now = func() time.Time { return now }
	token, err := th.TrustDevice(ctx, bob.ID, "")
	if err != nil || token == "" {
		t.Fatalf("trust a device: %q, %v", token, err)
	}
	store.Close()
	store, err = models.Open(ctx, dir, log)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	th = NewLoginThrottle(store)
	th.now = func() time.Time { return now }
	trusted := func(username, token string) bool {
		t.Helper()
		ok, err := th.DeviceTrusted(ctx, username, token)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	for i := 0; ; i++ {
		r, _ := th.Reserve("guess"+string(rune('a'+i)), "10.0.0.1")
		if r == nil {
			break
		}
		r.Failed()
	}
	if r, _ := th.ReserveFrom("bob", "10.0.0.1", trusted("bob", "")); r != nil {
		t.Fatal("a browser without a token passed the address's delay")
	}
	if r, _ := th.ReserveFrom("carol", "10.0.0.1", trusted("carol", token)); r != nil {
		t.Fatal("bob's token let carol's login past the address's delay")
	}
	r, _ := th.ReserveFrom("bob", "10.0.0.1", trusted("bob", token))
	if r == nil {
		t.Fatal("bob's known browser, after a restart, was held back by the address's delay")
	}
	r.Succeeded()
	next, err := th.TrustDevice(ctx, bob.ID, token)
	if err != nil {
		t.Fatal(err)
	}
	if trusted("bob", token) || !trusted("bob", next) {
		t.Fatal("a new login did not replace the browser's token")
	}
	now = now.Add(deviceTrustFor)
	if trusted("bob", next) {
		t.Fatal("a token 90 days old is still trusted")
	}
}
