package models

import (
	"context"
	"testing"
	"time"
)

// A user hashed ahead (HashNewUser) is stored without hashing again: the
// transaction that stores it does not wait on the hash gate, nor hold the
// write lock while a hash is made (parallel creations failed with
// "database is locked"). With the gate full, the store still goes through.
func TestCreateUserTakesAHashMadeAhead(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	n, err := s.HashNewUser(ctx, NewUser{Username: "lin", Password: "lin-password-1", Role: RoleUser})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.hashes.acquire(ctx, s.hashes.budget); err != nil { // no hash can start now
		t.Fatal(err)
	}
	quick, cancel := context.WithTimeout(ctx, 30*time.Second) // it would wait for the gate for good
	defer cancel()
	_, err = s.CreateUser(quick, n)
	s.hashes.release(s.hashes.budget)
	if err != nil {
		t.Fatalf("create a user hashed ahead with the hash gate full: %v", err)
	}
	if _, err := s.Authenticate(ctx, "lin", "lin-password-1"); err != nil {
		t.Fatalf("the stored hash does not check the password: %v", err)
	}
}
