package models

import (
	"context"
	"testing"
	"time"
)

// A browser's login token is stored as its SHA-256 only, with its expiry;
// it follows its account through a rename, is gone with a deleted account
// (a new account given the name inherits no trust), and the sweep removes
// expired ones only.
func TestLoginDevices(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	bob, err := s.CreateUser(ctx, NewUser{Username: "bob", Password: "long-enough-pw"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateUser(ctx, NewUser{Username: "root", Password: "long-enough-pw", Role: RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	now := s.now()
	token, err := s.NewLoginDevice(ctx, bob.ID, "", now)
	if err != nil || token == "" {
		t.Fatalf("new device: %q %v", token, err)
	}
	var stored string
	var expires time.Time
	if err := s.sql.QueryRow("SELECT token_hash, expires_at FROM login_devices").Scan(&stored, &expires); err != nil {
		t.Fatal(err)
	}
	if stored != hashToken(token) || !expires.Equal(now.Add(LoginDeviceTrustFor)) {
		t.Fatalf("stored %q expiring %v; want the token's SHA-256, expiring %v", stored, expires, now.Add(LoginDeviceTrustFor))
	}
	trusted := func(name, token string, at time.Time) bool {
		t.Helper()
		ok, err := s.LoginDeviceTrusted(ctx, name, token, at)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !trusted("bob", token, now) || trusted("root", token, now) || trusted("bob", stored, now) {
		t.Fatal("the token is trusted for someone else, or its hash is")
	}
	if !trusted("bob", token, now.Add(LoginDeviceTrustFor-time.Second)) || trusted("bob", token, now.Add(LoginDeviceTrustFor)) {
		t.Fatal("the token's trust does not end at its expiry")
	}

	if _, _, err := s.RenameUser(ctx, bob.ID, "robert"); err != nil {
		t.Fatal(err)
	}
	if trusted("bob", token, now) || !trusted("robert", token, now) {
		t.Fatal("the token did not follow its account's rename")
	}

	old, err := s.NewLoginDevice(ctx, bob.ID, "", now.Add(-LoginDeviceTrustFor))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.DeleteExpiredLoginDevices(ctx); err != nil || n != 1 || !trusted("robert", token, now) || trusted("robert", old, now) {
		t.Fatalf("sweep: %d (%v); want the expired token only removed", n, err)
	}

	if _, err := s.DeleteUser(ctx, bob.ID); err != nil {
		t.Fatal(err)
	}
	robert, err := s.CreateUser(ctx, NewUser{Username: "robert", Password: "long-enough-pw"})
	if err != nil {
		t.Fatal(err)
	}
	var left int
	s.sql.QueryRow("SELECT COUNT(*) FROM login_devices").Scan(&left)
	if left != 0 || trusted("robert", token, now) {
		t.Fatalf("%d tokens left after the account was deleted; a new %q is trusted: %v", left, robert.Username, trusted("robert", token, now))
	}
}
