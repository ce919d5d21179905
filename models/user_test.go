package models

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestPasswordHashRoundTrip(t *testing.T) {
	h, err := HashPassword("s3cret-password")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("unexpected hash format %q", h)
	}
	if ok, _ := CheckPassword(h, "s3cret-password"); !ok {
		t.Fatal("correct password rejected")
	}
	if ok, _ := CheckPassword(h, "s3cret-passwore"); ok {
		t.Fatal("wrong password accepted")
	}
	h2, _ := HashPassword("s3cret-password")
	if h == h2 {
		t.Fatal("two hashes of one password are equal: salt missing")
	}
	if _, err := CheckPassword("$bcrypt$x", "a"); err == nil {
		t.Fatal("unknown format accepted")
	}
}

func TestCreateUserValidation(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	cases := []struct {
		in    NewUser
		field string
	}{
		{NewUser{Username: "A", Password: "long-enough-pw"}, "username"},
		{NewUser{Username: "has space", Password: "long-enough-pw"}, "username"},
		{NewUser{Username: "carol", Password: "short"}, "password"},
		{NewUser{Username: "carol", Password: "long-enough-pw", Role: "root"}, "role"},
		{NewUser{Username: "carol", Password: "long-enough-pw", Email: "not-an-email"}, "email"},
	}
	for _, c := range cases {
		_, err := s.CreateUser(ctx, c.in)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("CreateUser(%+v) = %v; want validation error on %s", c.in, err, c.field)
		}
	}
	if n, _ := s.CountUsers(ctx); n != 0 {
		t.Fatalf("invalid input saved %d users", n)
	}
	if _, err := s.CreateUser(ctx, NewUser{Username: "carol", Password: "long-enough-pw"}); err != nil {
		t.Fatal(err)
	}
	_, err := s.CreateUser(ctx, NewUser{Username: "Carol", Password: "long-enough-pw"})
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Field != "username" {
		t.Fatalf("duplicate (case-insensitive) username: %v", err)
	}
}

func TestAuthenticate(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	u, _ := s.CreateUser(ctx, NewUser{Username: "dave", Password: "dave-password-1"})
	if got, err := s.Authenticate(ctx, "dave", "dave-password-1"); err != nil || got.ID != u.ID {
		t.Fatalf("good login: %v", err)
	}
	for _, c := range [][2]string{{"dave", "wrong-password"}, {"nobody", "dave-password-1"}} {
		if _, err := s.Authenticate(ctx, c[0], c[1]); !errors.Is(err, ErrBadCredentials) {
			t.Errorf("Authenticate(%q) = %v; want ErrBadCredentials", c[0], err)
		}
	}
	s.SetUserDisabled(ctx, u.ID, true)
	if _, err := s.Authenticate(ctx, "dave", "dave-password-1"); !errors.Is(err, ErrAccountDisabled) {
		t.Fatalf("disabled user with the right password: %v, want ErrAccountDisabled", err)
	}
	if _, err := s.Authenticate(ctx, "dave", "wrong-password"); !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("disabled user with a wrong password: %v, want ErrBadCredentials (nothing to enumerate)", err)
	}
	s.SetUserDisabled(ctx, u.ID, false)
	if err := s.SetPassword(ctx, u.ID, "new-password-22"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, "dave", "new-password-22"); err != nil {
		t.Fatalf("new password rejected: %v", err)
	}
}

func TestEnsureAdminOnlyOnEmptyDB(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	created, gen, err := s.EnsureAdmin(ctx, "")
	if err != nil || !created || len(gen) < MinPasswordLength {
		t.Fatalf("EnsureAdmin = %v %q %v", created, gen, err)
	}
	if _, err := s.Authenticate(ctx, "admin", gen); err != nil {
		t.Fatalf("generated admin password does not work: %v", err)
	}
	created, gen, err = s.EnsureAdmin(ctx, "other-password-1")
	if err != nil || created || gen != "" {
		t.Fatalf("second EnsureAdmin changed something: %v %q %v", created, gen, err)
	}
}

func TestAPITokens(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	u, _ := s.CreateUser(ctx, NewUser{Username: "erin", Password: "erin-password-1"})
	tok, secret, err := s.CreateToken(ctx, u.ID, "ci", 0)
	if err != nil || !strings.HasPrefix(secret, TokenPrefix) {
		t.Fatalf("CreateToken: %v %q", err, secret)
	}
	var stored string
	s.sql.QueryRowContext(ctx, "SELECT token_hash FROM api_tokens WHERE id = ?", tok.ID).Scan(&stored)
	if stored == "" || strings.Contains(stored, secret) {
		t.Fatal("token stored in clear")
	}
	if got, err := s.UserByToken(ctx, secret); err != nil || got.ID != u.ID {
		t.Fatalf("UserByToken: %v", err)
	}
	if _, err := s.UserByToken(ctx, secret+"x"); !errors.Is(err, ErrBadToken) {
		t.Fatalf("tampered token accepted: %v", err)
	}
	if _, err := s.RevokeToken(ctx, u.ID, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UserByToken(ctx, secret); !errors.Is(err, ErrBadToken) {
		t.Fatalf("revoked token accepted: %v", err)
	}
	// Expiry: move the store's clock past the token's expiry.
	_, short, _ := s.CreateToken(ctx, u.ID, "short", time.Hour)
	if _, err := s.UserByToken(ctx, short); err != nil {
		t.Fatal(err)
	}
	s.now = func() time.Time { return time.Now().UTC().Add(2 * time.Hour) }
	if _, err := s.UserByToken(ctx, short); !errors.Is(err, ErrBadToken) {
		t.Fatalf("expired token accepted: %v", err)
	}
	// Another user cannot revoke it.
	other, _ := s.CreateUser(ctx, NewUser{Username: "frank", Password: "frank-password"})
	toks, _ := s.ListTokens(ctx, u.ID)
	if _, err := s.RevokeToken(ctx, other.ID, toks[0].ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("foreign revoke: %v", err)
	}
}

func TestGroups(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	u, _ := s.CreateUser(ctx, NewUser{Username: "gina", Password: "gina-password"})
	g, err := s.CreateGroup(ctx, "vision-lab", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateGroup(ctx, "Vision-Lab", ""); err == nil {
		t.Fatal("duplicate group accepted")
	}
	s.AddGroupMember(ctx, g.ID, u.ID)
	s.AddGroupMember(ctx, g.ID, u.ID)
	gs, _ := s.ListGroups(ctx)
	if len(gs) != 1 || len(gs[0].Members) != 1 || gs[0].Members[0] != "gina" {
		t.Fatalf("groups = %+v", gs)
	}
	names, _ := s.UserGroups(ctx, u.ID)
	if len(names) != 1 || names[0] != "vision-lab" {
		t.Fatalf("UserGroups = %v", names)
	}
	s.RemoveGroupMember(ctx, g.ID, u.ID)
	if names, _ := s.UserGroups(ctx, u.ID); len(names) != 0 {
		t.Fatalf("still member: %v", names)
	}
}
