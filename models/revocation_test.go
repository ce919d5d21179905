package models

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Notebook codes: single use, bound to their workbench, short-lived; the
// sessions they make end with the portal session and with revocation.
func TestNotebookCodesAndSessions(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	u, _ := s.CreateUser(ctx, NewUser{Username: "nora", Password: "nora-password-1"})
	code, err := s.CreateNotebookCode(ctx, u.ID, "wb1", "portal-a", "browser-1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// Another workbench's host cannot use it, and the attempt uses it up.
	if _, _, err := s.ExchangeNotebookCode(ctx, code, "wb2", "browser-1", time.Hour); !errors.Is(err, ErrBadCode) {
		t.Fatalf("code for wb1 accepted by wb2: %v", err)
	}
	if _, _, err := s.ExchangeNotebookCode(ctx, code, "wb1", "browser-1", time.Hour); !errors.Is(err, ErrBadCode) {
		t.Fatalf("code accepted after a refused attempt: %v", err)
	}
	// A code brought by another browser (a link sent to someone) does not
	// open, nor does one that was minted without a browser to bind it to.
	code, _ = s.CreateNotebookCode(ctx, u.ID, "wb1", "portal-a", "browser-1", time.Minute)
	if _, _, err := s.ExchangeNotebookCode(ctx, code, "wb1", "browser-2", time.Hour); !errors.Is(err, ErrBadCode) {
		t.Fatalf("code accepted from another browser: %v", err)
	}
	if _, _, err := s.ExchangeNotebookCode(ctx, code, "wb1", "browser-1", time.Hour); !errors.Is(err, ErrBadCode) {
		t.Fatalf("code accepted after another browser tried it: %v", err)
	}
	unbound, _ := s.CreateNotebookCode(ctx, u.ID, "wb1", "portal-a", "", time.Minute)
	if _, _, err := s.ExchangeNotebookCode(ctx, unbound, "wb1", "", time.Hour); !errors.Is(err, ErrBadCode) {
		t.Fatalf("code bound to no browser accepted: %v", err)
	}
	code, _ = s.CreateNotebookCode(ctx, u.ID, "wb1", "portal-a", "browser-1", time.Minute)
	ns, token, err := s.ExchangeNotebookCode(ctx, code, "wb1", "browser-1", time.Hour)
	if err != nil || ns.UserID != u.ID || ns.WorkbenchID != "wb1" {
		t.Fatalf("exchange: %+v %v", ns, err)
	}
	if _, _, err := s.ExchangeNotebookCode(ctx, code, "wb1", "browser-1", time.Hour); !errors.Is(err, ErrBadCode) {
		t.Fatalf("code reused: %v", err)
	}
	if got, err := s.NotebookSessionByToken(ctx, token); err != nil || got.UserID != u.ID {
		t.Fatalf("session by token: %+v %v", got, err)
	}
	// Only the hash is stored.
	var n int64
	s.db.Model(&NotebookSession{}).Where("token_hash = ?", token).Count(&n)
	if n != 0 {
		t.Fatal("the session token is stored in clear")
	}
	// Expiry: codes after 60 s, sessions after their lifetime.
	late, _ := s.CreateNotebookCode(ctx, u.ID, "wb1", "portal-a", "browser-1", time.Minute)
	real := s.now
	s.now = func() time.Time { return real().Add(61 * time.Second) }
	if _, _, err := s.ExchangeNotebookCode(ctx, late, "wb1", "browser-1", time.Hour); !errors.Is(err, ErrBadCode) {
		t.Fatalf("expired code accepted: %v", err)
	}
	s.now = func() time.Time { return real().Add(2 * time.Hour) }
	if _, err := s.NotebookSessionByToken(ctx, token); !errors.Is(err, ErrNotFound) {
		t.Fatalf("expired session accepted: %v", err)
	}
	s.now = real

	// Logging out of the portal session ends its notebook sessions only.
	c2, _ := s.CreateNotebookCode(ctx, u.ID, "wb1", "portal-b", "browser-1", time.Minute)
	_, other, _ := s.ExchangeNotebookCode(ctx, c2, "wb1", "browser-1", time.Hour)
	if n, err := s.DeleteNotebookSessionsOf(ctx, "portal-a"); err != nil || n != 1 {
		t.Fatalf("logout ended %d sessions (%v), want 1", n, err)
	}
	if _, err := s.NotebookSessionByToken(ctx, token); !errors.Is(err, ErrNotFound) {
		t.Fatal("the logged-out session's notebook session survived")
	}
	if _, err := s.NotebookSessionByToken(ctx, other); err != nil {
		t.Fatal("another portal session's notebook session was ended")
	}

	// Revocation ends everything of the user and moves the auth epoch.
	_, secret, _ := s.CreateToken(ctx, u.ID, "t", 0)
	rev, err := s.RevokeUserAccess(ctx, u.ID)
	if err != nil || rev.Tokens != 1 || rev.NotebookSessions != 1 {
		t.Fatalf("revoke: %+v %v", rev, err)
	}
	if _, err := s.UserByToken(ctx, secret); !errors.Is(err, ErrBadToken) {
		t.Fatal("token survived revocation")
	}
	if _, err := s.NotebookSessionByToken(ctx, other); !errors.Is(err, ErrNotFound) {
		t.Fatal("notebook session survived revocation")
	}
	if got, _ := s.UserByID(ctx, u.ID); got.AuthEpoch != 1 {
		t.Fatalf("auth epoch %d, want 1", got.AuthEpoch)
	}
}
