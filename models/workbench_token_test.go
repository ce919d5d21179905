package models

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestWorkbenchTokenLifecycle: a token is made for an owned workbench only,
// stored hashed, valid for that workbench only, and ends when revoked,
// expired, its user disabled or its workbench deleted.
func TestWorkbenchTokenLifecycle(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	if err := s.SeedCatalog(ctx, nil); err != nil {
		t.Fatal(err)
	}
	alice, _ := s.CreateUser(ctx, NewUser{Username: "alice", Password: "alice-password-1"})
	bob, _ := s.CreateUser(ctx, NewUser{Username: "bob", Password: "bob-password-1"})
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
	if _, _, err := s.CreateWorkbenchToken(ctx, bob.ID, ids["a"], "steal", 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("token for another user's workbench: %v", err)
	}
	tok, secret, err := s.CreateWorkbenchToken(ctx, alice.ID, ids["a"], "vscode", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var stored WorkbenchToken
	s.db.First(&stored, tok.ID)
	if stored.TokenHash == secret || stored.TokenHash != HashSecret(secret) {
		t.Fatal("the secret is not stored as its hash")
	}
	if u, err := s.WorkbenchTokenUser(ctx, secret, ids["a"]); err != nil || u.ID != alice.ID {
		t.Fatalf("valid token: %v", err)
	}
	if _, err := s.WorkbenchTokenUser(ctx, secret, ids["b"]); !errors.Is(err, ErrBadWorkbenchToken) {
		t.Fatalf("token on another workbench: %v", err)
	}
	s.SetClock(func() time.Time { return time.Now().Add(2 * time.Hour) })
	if _, err := s.WorkbenchTokenUser(ctx, secret, ids["a"]); !errors.Is(err, ErrBadWorkbenchToken) {
		t.Fatalf("expired token: %v", err)
	}
	s.SetClock(time.Now)

	_, s2, _ := s.CreateWorkbenchToken(ctx, alice.ID, ids["a"], "two", 0)
	if err := s.SetUserDisabled(ctx, alice.ID, true); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WorkbenchTokenUser(ctx, s2, ids["a"]); !errors.Is(err, ErrBadWorkbenchToken) {
		t.Fatalf("disabled user's token: %v", err)
	}
	if err := s.SetUserDisabled(ctx, alice.ID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RevokeWorkbenchToken(ctx, bob.ID, ids["a"], tok.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("bob revokes alice's token: %v", err)
	}
	if err := s.MarkWorkbenchDeleted(ctx, ids["a"], time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WorkbenchTokenUser(ctx, s2, ids["a"]); !errors.Is(err, ErrBadWorkbenchToken) {
		t.Fatalf("token of a deleted workbench: %v", err)
	}
	if _, _, err := s.CreateWorkbenchToken(ctx, alice.ID, ids["a"], "three", 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("token for a deleted workbench: %v", err)
	}
}
