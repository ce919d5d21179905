package models

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/pressly/goose/v3"
)

// A pending key's code verifies it for SSHVerifyCodeValidFor after it was
// issued, on the store's clock: at the limit it is refused (by the lookup
// before the signature and by the verification after it) and the key
// stays pending. A new code, which only the key's owner can ask for,
// replaces the old one and counts from when it was issued.
func TestSSHVerifyCodeExpires(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	t0 := time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)
	now := t0
	s.SetClock(func() time.Time { return now })
	alice, bob := newSSHUser(t, s, "alice"), newSSHUser(t, s, "bob")
	line, pk := newKeyLine(t)
	k, err := s.CreateSSHKey(ctx, alice.ID, "laptop", line)
	if err != nil {
		t.Fatal(err)
	}
	if at := k.VerifyExpiresAt(); at == nil || !at.Equal(t0.Add(24*time.Hour)) {
		t.Fatalf("a new key's code expires at %v; want %v", at, t0.Add(24*time.Hour))
	}
	if keys, _ := s.ListSSHKeys(ctx, alice.ID); len(keys) != 1 || keys[0].VerifyExpiresAt() == nil || !keys[0].VerifyExpiresAt().Equal(t0.Add(SSHVerifyCodeValidFor)) {
		t.Fatalf("the stored key's expiry: %+v", keys)
	}

	now = t0.Add(SSHVerifyCodeValidFor - time.Second)
	if _, got, err := s.PendingSSHKey(ctx, k.VerifyCode, pk); err != nil || got.ID != k.ID {
		t.Fatalf("the code a second before it expires: %v %v", got, err)
	}
	now = t0.Add(SSHVerifyCodeValidFor)
	if u, got, err := s.PendingSSHKey(ctx, k.VerifyCode, pk); !errors.Is(err, ErrSSHVerifyCodeExpired) || u != nil || got == nil || got.ID != k.ID {
		t.Fatalf("the code once expired: %v %v %v; want ErrSSHVerifyCodeExpired with the key and no account", u, got, err)
	}
	if _, _, err := s.VerifySSHKey(ctx, k.ID); !errors.Is(err, ErrSSHVerifyCodeExpired) {
		t.Fatalf("verify with an expired code: %v", err)
	}
	if keys, _ := s.ListSSHKeys(ctx, alice.ID); len(keys) != 1 || keys[0].Verified() || !keys[0].VerifyExpired(now) {
		t.Fatalf("after the refused verification: %+v; want still pending, expired", keys)
	}

	// Bob cannot renew Alice's key (nor learn that it exists).
	if _, err := s.RenewSSHVerifyCode(ctx, bob.ID, k.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("bob renews alice's code: %v; want ErrNotFound", err)
	}
	now = t0.Add(30 * time.Hour)
	nk, err := s.RenewSSHVerifyCode(ctx, alice.ID, k.ID)
	if err != nil {
		t.Fatal(err)
	}
	if nk.VerifyCode == k.VerifyCode || len(nk.VerifyCode) != sshVerifyCodeLen || !nk.VerifyExpiresAt().Equal(now.Add(SSHVerifyCodeValidFor)) || nk.VerifyExpired(now) {
		t.Fatalf("a new code: %q (old %q) expiring %v", nk.VerifyCode, k.VerifyCode, nk.VerifyExpiresAt())
	}
	if _, _, err := s.PendingSSHKey(ctx, k.VerifyCode, pk); !errors.Is(err, ErrUnknownSSHKey) {
		t.Fatalf("the old code after a new one was issued: %v; want ErrUnknownSSHKey", err)
	}
	if u, got, err := s.PendingSSHKey(ctx, nk.VerifyCode, pk); err != nil || u.ID != alice.ID || got.ID != k.ID {
		t.Fatalf("the new code: %v %v %v", u, got, err)
	}
	v, _, err := s.VerifySSHKey(ctx, k.ID)
	if err != nil || !v.Verified() || v.VerifyExpiresAt() != nil || v.VerifyCodeAt != nil {
		t.Fatalf("verify with the new code: %+v %v", v, err)
	}
	// A verified key needs no code.
	var ce *ConflictError
	if _, err := s.RenewSSHVerifyCode(ctx, alice.ID, k.ID); !errors.As(err, &ce) {
		t.Fatalf("renew a verified key's code: %v; want a conflict", err)
	}
}

// Keys pending when the expiry came (schema 156) count from when they
// were added; verified keys have no code time.
func TestMigrationDatesPendingSSHKeyCodes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	raw, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, DBFileName)+"?_journal_mode=WAL&_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	sub, _ := fs.Sub(migrationFiles, "migrations")
	p, err := goose.NewProvider(goose.DialectSQLite3, raw, sub)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 156); err != nil {
		t.Fatal(err)
	}
	added := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	pendingLine, _ := newKeyLine(t)
	_, pendingFP, _ := ParseSSHPublicKey(pendingLine)
	verifiedLine, _ := newKeyLine(t)
	_, verifiedFP, _ := ParseSSHPublicKey(verifiedLine)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO users (id, username, display_name, email, role, password_hash, disabled, created_at, updated_at) VALUES (7, 'olduser', '', '', 'user', 'x', 0, ?, ?)`, []any{added, added}},
		{`INSERT INTO ssh_keys (id, user_id, name, public_key, fingerprint, created_at, verify_code) VALUES (3, 7, 'pending', ?, ?, ?, 'abcdefghij')`, []any{pendingLine, pendingFP, added}},
		{`INSERT INTO ssh_keys (id, user_id, name, public_key, fingerprint, created_at, verified_at) VALUES (4, 7, 'verified', ?, ?, ?, ?)`, []any{verifiedLine, verifiedFP, added, added}},
	} {
		if _, err := raw.ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	raw.Close()

	s, err := Open(ctx, dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	defer s.Close()
	keys, err := s.ListSSHKeys(ctx, 7)
	if err != nil || len(keys) != 2 {
		t.Fatalf("keys: %+v %v", keys, err)
	}
	for _, k := range keys {
		switch k.Name {
		case "pending":
			if k.VerifyCodeAt == nil || !k.VerifyCodeAt.Equal(added) || !k.VerifyExpiresAt().Equal(added.Add(SSHVerifyCodeValidFor)) {
				t.Errorf("the pending key's code: issued %v, expires %v; want issued %v", k.VerifyCodeAt, k.VerifyExpiresAt(), added)
			}
		case "verified":
			if k.VerifyCodeAt != nil || k.VerifyExpiresAt() != nil {
				t.Errorf("the verified key has a code time: %v", k.VerifyCodeAt)
			}
		}
	}
}
