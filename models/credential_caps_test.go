package models

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// capRefusal checks err is the cap's refusal: a Taken ValidationError
// with code that names the limit and says how to make room.
func capRefusal(t *testing.T, what string, err error, code string, limit int) {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) || !ve.Taken || ve.Code != code {
		t.Fatalf("%s past the cap: %v, want a %s refusal", what, err, code)
	}
	if !strings.Contains(ve.Message, fmt.Sprint(limit)) || !strings.Contains(ve.Message, "to make room") {
		t.Fatalf("%s refusal %q does not name the limit and what to do", what, ve.Message)
	}
}

// An account may hold MaxAPITokensPerUser live API tokens: one more is
// refused, a revoked or expired one does not count, and the cap is
// another user's own.
func TestAPITokenCap(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	u, _ := s.CreateUser(ctx, NewUser{Username: "kai", Password: "correct-horse-1"})
	other, _ := s.CreateUser(ctx, NewUser{Username: "mia", Password: "correct-horse-2"})
	var first int64
	for i := range MaxAPITokensPerUser {
		ttl := time.Duration(0)
		if i == 1 {
			ttl = time.Hour // expires below
		}
		tok, _, err := s.CreateToken(ctx, u.ID, fmt.Sprintf("t%d", i), ttl)
		if err != nil {
			t.Fatalf("token %d: %v", i, err)
		}
		if i == 0 {
			first = tok.ID
		}
	}
	_, _, err := s.CreateToken(ctx, u.ID, "one-more", 0)
	capRefusal(t, "API token", err, CodeTooManyTokens, MaxAPITokensPerUser)
	if _, _, err := s.CreateToken(ctx, other.ID, "mine", 0); err != nil {
		t.Fatalf("another user's token: %v", err)
	}
	if _, err := s.RevokeToken(ctx, u.ID, first); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateToken(ctx, u.ID, "after-revoke", 0); err != nil {
		t.Fatalf("a revoked token made room: %v", err)
	}
	if _, _, err := s.CreateToken(ctx, u.ID, "full-again", 0); err == nil {
		t.Fatal("full again, yet accepted")
	}
	s.SetClock(func() time.Time { return time.Now().Add(2 * time.Hour) })
	if _, _, err := s.CreateToken(ctx, u.ID, "after-expiry", 0); err != nil {
		t.Fatalf("an expired token made room: %v", err)
	}
}

// Concurrent creations cannot both take the last place: the count and
// the insert share one transaction.
func TestAPITokenCapConcurrent(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	u, _ := s.CreateUser(ctx, NewUser{Username: "kai", Password: "correct-horse-1"})
	for i := range MaxAPITokensPerUser - 1 {
		if _, _, err := s.CreateToken(ctx, u.ID, fmt.Sprintf("t%d", i), 0); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.CreateToken(ctx, u.ID, fmt.Sprintf("race%d", i), 0)
		}()
	}
	wg.Wait()
	toks, _ := s.ListTokens(ctx, u.ID)
	if len(toks) != MaxAPITokensPerUser {
		t.Fatalf("%d tokens after a race for the last place, want %d", len(toks), MaxAPITokensPerUser)
	}
}

// A workbench may hold MaxWorkbenchTokensPerWorkbench live tokens; another
// workbench of the same owner has its own.
func TestWorkbenchTokenCap(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	if err := s.SeedCatalog(ctx, nil); err != nil {
		t.Fatal(err)
	}
	alice, _ := s.CreateUser(ctx, NewUser{Username: "alice", Password: "alice-password-1"})
	img, _ := s.ListImages(ctx, false)
	fl, _ := s.ListFlavors(ctx, false)
	ids := map[string]string{}
	for _, name := range []string{"a", "b"} {
		wb := &Workbench{Name: name, OwnerID: alice.ID, ImageID: img[0].ID, FlavorID: fl[0].ID}
		if err := s.CreateWorkbench(ctx, wb, GPUNeed{}, nil); err != nil {
			t.Fatal(err)
		}
		ids[name] = wb.ID
	}
	var first int64
	for i := range MaxWorkbenchTokensPerWorkbench {
		tok, _, err := s.CreateWorkbenchToken(ctx, alice.ID, ids["a"], fmt.Sprintf("t%d", i), 0)
		if err != nil {
			t.Fatalf("token %d: %v", i, err)
		}
		if i == 0 {
			first = tok.ID
		}
	}
	_, _, err := s.CreateWorkbenchToken(ctx, alice.ID, ids["a"], "one-more", 0)
	capRefusal(t, "workbench token", err, CodeTooManyTokens, MaxWorkbenchTokensPerWorkbench)
	if _, _, err := s.CreateWorkbenchToken(ctx, alice.ID, ids["b"], "other-wb", 0); err != nil {
		t.Fatalf("another workbench's token: %v", err)
	}
	if _, err := s.RevokeWorkbenchToken(ctx, alice.ID, ids["a"], first); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateWorkbenchToken(ctx, alice.ID, ids["a"], "after-revoke", 0); err != nil {
		t.Fatalf("a revoked token made room: %v", err)
	}
}

// An account may hold MaxSSHKeysPerUser keys, pending ones included (a
// pending key whose code expired too: it can be renewed); deleting one
// makes room.
func TestSSHKeyCap(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	u, _ := s.CreateUser(ctx, NewUser{Username: "kai", Password: "correct-horse-1"})
	var first int64
	for i := range MaxSSHKeysPerUser {
		line, _ := newKeyLine(t)
		k, err := s.CreateSSHKey(ctx, u.ID, fmt.Sprintf("k%d", i), line)
		if err != nil {
			t.Fatalf("key %d: %v", i, err)
		}
		if i == 0 {
			first = k.ID
		}
	}
	s.SetClock(func() time.Time { return time.Now().Add(2 * SSHVerifyCodeValidFor) })
	line, _ := newKeyLine(t)
	_, err := s.CreateSSHKey(ctx, u.ID, "one-more", line)
	capRefusal(t, "SSH key", err, CodeTooManySSHKeys, MaxSSHKeysPerUser)
	if _, err := s.DeleteSSHKey(ctx, u.ID, first); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateSSHKey(ctx, u.ID, "one-more", line); err != nil {
		t.Fatalf("a deleted key made room: %v", err)
	}
}
