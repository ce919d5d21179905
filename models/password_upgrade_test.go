package models

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/argon2"
)

// oldHash makes a hash with the parameters used before issue 15 (64 MiB,
// t=1, p=2), as databases made by earlier versions hold.
func oldHash(t *testing.T, password string) string {
	t.Helper()
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		t.Fatal(err)
	}
	key := argon2.IDKey([]byte(password), salt, 1, 64*1024, 2, 32)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, 64*1024, 1, 2, b64.EncodeToString(salt), b64.EncodeToString(key))
}

func TestNewHashesUseOWASPParameters(t *testing.T) {
	h, err := HashPassword("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h, "$m=19456,t=2,p=1$") {
		t.Fatalf("hash %q: want m=19456,t=2,p=1", h)
	}
	if NeedsRehash(h) {
		t.Fatal("a fresh hash needs rehashing")
	}
	if PasswordCheckMemory() != 19<<20 {
		t.Fatalf("PasswordCheckMemory = %d, want 19 MiB", PasswordCheckMemory())
	}
}

// TestOldHashUpgradedAtLogin: a user whose hash has the old parameters logs
// in with the same password, and the stored hash is now a current one that
// still accepts the password; a wrong password upgrades nothing.
func TestOldHashUpgradedAtLogin(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	u, err := s.CreateUser(ctx, NewUser{Username: "olduser", Password: "old-password-1", Role: RoleUser})
	if err != nil {
		t.Fatal(err)
	}
	legacy := oldHash(t, "old-password-1")
	if err := s.db.Model(&User{}).Where("id = ?", u.ID).Update("password_hash", legacy).Error; err != nil {
		t.Fatal(err)
	}
	if !NeedsRehash(legacy) {
		t.Fatal("the old hash does not need rehashing")
	}
	if _, err := s.Authenticate(ctx, "olduser", "wrong-password-1"); !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("wrong password: %v", err)
	}
	if got, _ := s.UserByID(ctx, u.ID); got.PasswordHash != legacy {
		t.Fatal("a failed login changed the hash")
	}
	if _, err := s.Authenticate(ctx, "olduser", "old-password-1"); err != nil {
		t.Fatalf("login with the old hash: %v", err)
	}
	got, _ := s.UserByID(ctx, u.ID)
	if got.PasswordHash == legacy || NeedsRehash(got.PasswordHash) {
		t.Fatalf("hash after login %q: want a current one", got.PasswordHash)
	}
	if _, err := s.Authenticate(ctx, "olduser", "old-password-1"); err != nil {
		t.Fatalf("login with the upgraded hash: %v", err)
	}
}

// TestHashGateSharedAndBounded: with room for one check and no wait, a
// login is refused at once (ErrHashBusy) while another hash holds the gate,
// and a password change waits for room instead of failing.
func TestHashGateSharedAndBounded(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	s.SetHashWait(0)
	s.SetHashMemory(1) // below one check: room for exactly one
	if n := s.HashSlots(); n != 1 {
		t.Fatalf("HashSlots = %d, want 1", n)
	}
	u, err := s.CreateUser(ctx, NewUser{Username: "gated", Password: "gated-password-1", Role: RoleUser})
	if err != nil {
		t.Fatal(err)
	}
	w := PasswordCheckMemory()
	if !s.hashes.tryAcquire(w) {
		t.Fatal("empty gate refused")
	}
	if _, err := s.Authenticate(ctx, "gated", "gated-password-1"); !errors.Is(err, ErrHashBusy) {
		t.Fatalf("login with the gate full: %v, want ErrHashBusy", err)
	}
	done := make(chan error, 1)
	go func() { done <- s.SetPassword(ctx, u.ID, "another-password-2") }()
	select {
	case err := <-done:
		t.Fatalf("SetPassword finished (%v) while the gate was full", err)
	default:
	}
	s.hashes.release(w)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, "gated", "another-password-2"); err != nil {
		t.Fatal(err)
	}
	if s2 := (&Store{hashes: newHashGate(0), versions: &tableVersions{}}); s2.HashSlots() != 6 {
		t.Fatalf("default gate: %d slots, want 6", s2.HashSlots())
	}
}

// TestLoginWaitsForRoomInTheGate: a login while the gate is full waits for
// room (no ErrHashBusy) and gets in once it is freed; a login whose caller
// leaves while waiting gives its place up at once, with its context's error.
func TestLoginWaitsForRoomInTheGate(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	s.SetHashMemory(1) // room for one check
	if _, err := s.CreateUser(ctx, NewUser{Username: "student", Password: "student-password-1", Role: RoleUser}); err != nil {
		t.Fatal(err)
	}
	release, err := s.HoldHashGate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// One that leaves while it waits.
	leaving, leave := context.WithCancel(ctx)
	left := make(chan error, 1)
	go func() {
		_, err := s.Authenticate(leaving, "student", "student-password-1")
		left <- err
	}()
	waitHashWaiting(t, s, 1)
	leave()
	if err := <-left; !errors.Is(err, context.Canceled) {
		t.Fatalf("login whose caller left: %v, want context.Canceled", err)
	}
	if n := s.HashChecksWaiting(); n != 0 {
		t.Fatalf("%d checks still waiting after the caller left", n)
	}
	// Three that wait behind the held gate, then all get in.
	done := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := s.Authenticate(ctx, "student", "student-password-1")
			done <- err
		}()
	}
	waitHashWaiting(t, s, 3)
	release()
	for range 3 {
		if err := <-done; err != nil {
			t.Fatalf("login after waiting: %v", err)
		}
	}
	// The gate is whole again: nothing leaked by the one that left.
	if !s.hashes.tryAcquire(s.hashes.budget) {
		t.Fatal("gate not whole after the logins")
	}
	s.hashes.release(s.hashes.budget)
}

// waitHashWaiting waits until n checks wait for room in s's gate.
func waitHashWaiting(t *testing.T, s *Store, n int64) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for s.HashChecksWaiting() != n {
		select {
		case <-deadline:
			t.Fatalf("%d checks waiting, want %d", s.HashChecksWaiting(), n)
		case <-tick.C:
		}
	}
}

// An unknown user's login checks the dummy hash: it must carry exactly the
// parameters a fresh password hash has, or its cost (and so its timing)
// would tell unknown users from known ones.
func TestDummyHashCostsWhatARealHashCosts(t *testing.T) {
	real, err := HashPassword("correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	want, err := parseHash(real)
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseHash(dummyHash())
	if err != nil {
		t.Fatalf("dummy hash does not parse: %v", err)
	}
	if got.memory != want.memory || got.time != want.time || got.threads != want.threads || len(got.key) != len(want.key) {
		t.Fatalf("dummy hash parameters m=%d t=%d p=%d key=%d; a real hash has m=%d t=%d p=%d key=%d",
			got.memory, got.time, got.threads, len(got.key), want.memory, want.time, want.threads, len(want.key))
	}
	if ok, err := CheckPassword(dummyHash(), ""); err != nil || ok {
		t.Fatalf("dummy hash matched the empty password (ok=%v err=%v)", ok, err)
	}
}
