package models

import (
	"context"
	"errors"
	"testing"
)

// A database that refuses writes (here made query-only, as a read-only
// disk) answers errors Unwritable recognises; reads go on, and other
// errors are not taken for it.
func TestUnwritable(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestStore(t)
	if err := s.QueryOnly(ctx, true); err != nil {
		t.Fatal(err)
	}
	_, err := s.CreateUser(ctx, NewUser{Username: "bob", Password: "bob-password-1", Role: "user"})
	if !Unwritable(err) {
		t.Fatalf("a write to a read-only database: %v, not recognised as unwritable", err)
	}
	if _, err := s.ListUsers(ctx); err != nil {
		t.Fatalf("a read of a read-only database: %v", err)
	}
	if Unwritable(ErrNotFound) || Unwritable(errors.New("database or disk is full")) || Unwritable(nil) {
		t.Error("an error that is no refused write was taken for one")
	}
	if err := s.QueryOnly(ctx, false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateUser(ctx, NewUser{Username: "bob", Password: "bob-password-1", Role: "user"}); err != nil {
		t.Fatalf("a write once the database is writable again: %v", err)
	}
}
