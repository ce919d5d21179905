package models

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"database/sql"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pressly/goose/v3"
	"golang.org/x/crypto/ssh"
)

// newKeyLine is a fresh ed25519 public key as an authorized_keys line.
func newKeyLine(t *testing.T) (string, ssh.PublicKey) {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pk))) + " someone@laptop", pk
}

func newSSHUser(t *testing.T, s *Store, name string) *User {
	t.Helper()
	u, err := s.CreateUser(context.Background(), NewUser{Username: name, Password: name + "-password-1", Role: RoleUser})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func wantTaken(t *testing.T, err error, field, msg, what string) {
	t.Helper()
	var ve *ValidationError
	if !errors.As(err, &ve) || !ve.Taken || ve.Field != field || !strings.Contains(ve.Message, msg) {
		t.Fatalf("%s: %v; want %s taken saying %q", what, err, field, msg)
	}
}

// A key another account added but never verified stands in no one's way
// and opens nothing; once its holder verifies their own copy, the pending
// copies of others go, and nobody else may add it.
func TestPendingSSHKeyBlocksNoOne(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	alice, mallory, carol := newSSHUser(t, s, "alice"), newSSHUser(t, s, "mallory"), newSSHUser(t, s, "carol")
	line, pk := newKeyLine(t)

	// Mallory pastes Alice's public key first: pending, and it opens nothing.
	mk, err := s.CreateSSHKey(ctx, mallory.ID, "stolen", line)
	if err != nil {
		t.Fatal(err)
	}
	if mk.Verified() || !strings.HasPrefix(mk.VerifyUser(), SSHVerifyUserPrefix) || len(mk.VerifyCode) != sshVerifyCodeLen {
		t.Fatalf("a new key: verified %v, verify user %q", mk.Verified(), mk.VerifyUser())
	}
	if _, _, err := s.UserBySSHKey(ctx, pk); !errors.Is(err, ErrUnknownSSHKey) {
		t.Fatalf("a pending key resolves to an account: %v", err)
	}
	// Alice adds her own key all the same, with a code of her own.
	ak, err := s.CreateSSHKey(ctx, alice.ID, "laptop", line)
	if err != nil {
		t.Fatalf("alice adds her key after mallory's pending copy: %v", err)
	}
	if ak.VerifyCode == mk.VerifyCode {
		t.Fatal("two pending keys share a code")
	}
	// One account cannot hold the same key twice, pending or not.
	_, err = s.CreateSSHKey(ctx, alice.ID, "again", line)
	wantTaken(t, err, "public_key", "this key is already registered", "alice adds her pending key again")

	// A code opens only the key it was given for: Mallory's code with
	// Alice's key names Mallory's row, Alice's code another key nothing.
	if _, k, err := s.PendingSSHKey(ctx, mk.VerifyCode, pk); err != nil || k.ID != mk.ID {
		t.Fatalf("mallory's code and the key: %v %v", k, err)
	}
	_, otherPK := newKeyLine(t)
	if _, _, err := s.PendingSSHKey(ctx, ak.VerifyCode, otherPK); !errors.Is(err, ErrUnknownSSHKey) {
		t.Fatalf("alice's code with another key: %v", err)
	}

	k, removed, err := s.VerifySSHKey(ctx, ak.ID)
	if err != nil || !k.Verified() || k.VerifyUser() != "" || removed != 1 {
		t.Fatalf("verify alice's key: %+v removed %d, %v", k, removed, err)
	}
	if u, k, err := s.UserBySSHKey(ctx, pk); err != nil || u.ID != alice.ID || k.ID != ak.ID {
		t.Fatalf("the verified key resolves to %v %v (%v), want alice's", u, k, err)
	}
	if keys, _ := s.ListSSHKeys(ctx, mallory.ID); len(keys) != 0 {
		t.Fatalf("mallory's pending copy is still there: %+v", keys)
	}
	if _, _, err := s.PendingSSHKey(ctx, mk.VerifyCode, pk); !errors.Is(err, ErrUnknownSSHKey) {
		t.Fatalf("mallory's code after alice verified: %v", err)
	}
	// Verified once: a second verification of the row finds nothing pending.
	if _, _, err := s.VerifySSHKey(ctx, ak.ID); !errors.Is(err, ErrUnknownSSHKey) {
		t.Fatalf("verify twice: %v", err)
	}

	// Now the key is Alice's: another account is refused without being
	// told whose it is, and Alice is told she has it.
	_, err = s.CreateSSHKey(ctx, carol.ID, "mine", line)
	wantTaken(t, err, "public_key", "another account has already verified this key", "carol adds alice's verified key")
	if strings.Contains(err.Error(), "alice") {
		t.Fatalf("the refusal names the account: %v", err)
	}
	_, err = s.CreateSSHKey(ctx, alice.ID, "again", line)
	wantTaken(t, err, "public_key", "this key is already registered", "alice adds her verified key again")
}

// Two accounts' pending copies of one key: should both be verified (the
// second slipped in after the first was verified, past CreateSSHKey's
// check), the database lets only one through and the other stays pending.
func TestSSHKeyVerifiedOnceOnly(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	alice, bob := newSSHUser(t, s, "alice"), newSSHUser(t, s, "bob")
	line, pk := newKeyLine(t)
	ak, err := s.CreateSSHKey(ctx, alice.ID, "laptop", line)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.VerifySSHKey(ctx, ak.ID); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	late := &SSHKey{UserID: bob.ID, Name: "late", PublicKey: ak.PublicKey, Fingerprint: ak.Fingerprint, CreatedAt: now, VerifyCode: newSSHVerifyCode(), VerifyCodeAt: &now}
	if err := s.db.WithContext(ctx).Create(late).Error; err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.VerifySSHKey(ctx, late.ID); !errors.Is(err, ErrSSHKeyVerifiedElsewhere) {
		t.Fatalf("a second account verifies the key: %v", err)
	}
	if keys, _ := s.ListSSHKeys(ctx, bob.ID); len(keys) != 1 || keys[0].Verified() {
		t.Fatalf("bob's copy after the refused verification: %+v", keys)
	}
	if u, _, err := s.UserBySSHKey(ctx, pk); err != nil || u.ID != alice.ID {
		t.Fatalf("the key resolves to %v (%v), want alice", u, err)
	}
}

// Keys added before verification existed (schema 150) keep opening their
// owners' workbenches: the migration counts them verified as of when they
// were added, with their ids, and a new key never takes a deleted one's id.
func TestMigrationKeepsOldSSHKeysVerified(t *testing.T) {
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
	if _, err := p.UpTo(ctx, 150); err != nil {
		t.Fatal(err)
	}
	added := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	line, pk := newKeyLine(t)
	_, fp, err := ParseSSHPublicKey(line)
	if err != nil {
		t.Fatal(err)
	}
	oldLine, _ := newKeyLine(t)
	_, oldFP, _ := ParseSSHPublicKey(oldLine)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO users (id, username, display_name, email, role, password_hash, disabled, created_at, updated_at) VALUES (7, 'olduser', '', '', 'user', 'x', 0, ?, ?)`, []any{added, added}},
		{`INSERT INTO ssh_keys (id, user_id, name, public_key, fingerprint, created_at) VALUES (3, 7, 'old laptop', ?, ?, ?)`, []any{line, fp, added}},
		{`INSERT INTO ssh_keys (id, user_id, name, public_key, fingerprint, created_at) VALUES (4, 7, 'deleted', ?, ?, ?)`, []any{oldLine, oldFP, added}},
		{`DELETE FROM ssh_keys WHERE id = 4`, nil},
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
	u, k, err := s.UserBySSHKey(ctx, pk)
	if err != nil || u.ID != 7 || k.ID != 3 || !k.Verified() || !k.VerifiedAt.Equal(added) || k.VerifyUser() != "" {
		t.Fatalf("the old key after the migration: %+v of %v (%v); want verified as of %v", k, u, err, added)
	}
	nk, err := s.CreateSSHKey(ctx, 7, "new", oldLine)
	if err != nil {
		t.Fatal(err)
	}
	if nk.ID <= 4 || nk.Verified() {
		t.Fatalf("a key added after the migration: id %d verified %v; want a new id above the deleted key's 4, pending", nk.ID, nk.Verified())
	}
}
