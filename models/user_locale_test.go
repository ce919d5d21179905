package models

import (
	"context"
	"errors"
	"testing"
)

// The language a user picks survives a reload of the user (the column the
// migration adds), and "" forgets it.
func TestSetUserLocale(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	u, err := s.CreateUser(ctx, NewUser{Username: "lin", Password: "lin-password-1"})
	if err != nil {
		t.Fatal(err)
	}
	if u.Locale != "" {
		t.Fatalf("new user locale %q, want empty", u.Locale)
	}
	if err := s.SetUserLocale(ctx, u.ID, "zh-CN"); err != nil {
		t.Fatal(err)
	}
	got, _ := s.UserByID(ctx, u.ID)
	if got.Locale != "zh-CN" {
		t.Fatalf("locale after save %q", got.Locale)
	}
	if err := s.SetUserLocale(ctx, u.ID, ""); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.UserByID(ctx, u.ID); got.Locale != "" {
		t.Fatalf("locale after reset %q", got.Locale)
	}
	if err := s.SetUserLocale(ctx, 99999, "en"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown user: %v", err)
	}
}
