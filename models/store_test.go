package models

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// newTestStore opens a real SQLite file in a temporary data directory.
func newTestStore(t *testing.T) (*Store, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := Open(context.Background(), dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

func TestOpenCreatesFileAndMigrations(t *testing.T) {
	s, dir := newTestStore(t)
	ctx := context.Background()
	if _, err := os.Stat(filepath.Join(dir, DBFileName)); err != nil {
		t.Fatalf("database file missing: %v", err)
	}
	v, err := s.SchemaVersion(ctx)
	if err != nil || v < 1 {
		t.Fatalf("schema version = %d, %v; want >= 1", v, err)
	}
	var mode string
	if err := s.sql.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v; want wal", mode, err)
	}
	var fk int
	if err := s.sql.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
		t.Fatalf("foreign_keys = %d, %v; want 1", fk, err)
	}
}

func TestReopenIsNoOpMigration(t *testing.T) {
	s, dir := newTestStore(t)
	ctx := context.Background()
	if _, err := s.CreateUser(ctx, NewUser{Username: "alice", Password: "correct-horse-1"}); err != nil {
		t.Fatal(err)
	}
	v1, _ := s.SchemaVersion(ctx)
	s.Close()
	s2, err := Open(ctx, dir, nil)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s2.Close()
	v2, _ := s2.SchemaVersion(ctx)
	if v1 != v2 {
		t.Fatalf("schema version changed on reopen: %d → %d", v1, v2)
	}
	var applied int
	s2.sql.QueryRowContext(ctx, "SELECT COUNT(*) FROM goose_db_version WHERE version_id = ?", v1).Scan(&applied)
	if applied != 1 {
		t.Fatalf("migration %d recorded %d times, want once", v1, applied)
	}
	if _, err := s2.UserByUsername(ctx, "alice"); err != nil {
		t.Fatalf("data lost on reopen: %v", err)
	}
}

func TestBackupWritesUsableCopy(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	if _, err := s.CreateUser(ctx, NewUser{Username: "bob", Password: "correct-horse-2"}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "copy", DBFileName)
	os.MkdirAll(filepath.Dir(out), 0o755)
	if err := s.Backup(ctx, out); err != nil {
		t.Fatalf("backup: %v", err)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("backup file mode %v (%v), want 0600: it holds password hashes and tokens", fi.Mode().Perm(), err)
	}
	if err := s.Backup(ctx, out); err == nil {
		t.Fatal("backup over an existing file should fail")
	}
	b, err := Open(ctx, filepath.Dir(out), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.UserByUsername(ctx, "bob"); err != nil {
		t.Fatalf("backup lacks user: %v", err)
	}
}

func TestDataDirIsPrivate(t *testing.T) {
	ctx := context.Background()
	fresh := filepath.Join(t.TempDir(), "fresh")
	existing := t.TempDir()
	os.Chmod(existing, 0o755)
	for _, dir := range []string{fresh, existing} {
		s, err := Open(ctx, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
			t.Errorf("data dir %s mode %v, want 0700", dir, fi.Mode().Perm())
		}
		if fi, _ := os.Stat(filepath.Join(dir, DBFileName)); fi.Mode().Perm() != 0o600 {
			t.Errorf("database mode %v, want 0600", fi.Mode().Perm())
		}
	}
}

func TestInstallIDStable(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	a, err := s.InstallID(ctx)
	if err != nil || a == "" {
		t.Fatalf("install id %q, %v", a, err)
	}
	b, _ := s.InstallID(ctx)
	if a != b {
		t.Fatalf("install id changed: %q → %q", a, b)
	}
}

func TestSessionStoreCommitFindDeleteExpire(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	st := s.SessionStore()
	if err := st.CommitCtx(ctx, "tok1", []byte("data1"), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	b, ok, err := st.FindCtx(ctx, "tok1")
	if err != nil || !ok || string(b) != "data1" {
		t.Fatalf("find = %q %v %v", b, ok, err)
	}
	// An expired session is not found even before cleanup.
	st.CommitCtx(ctx, "old", []byte("x"), time.Now().Add(-time.Second))
	if _, ok, _ := st.FindCtx(ctx, "old"); ok {
		t.Fatal("expired session found")
	}
	n, err := st.DeleteExpired(ctx)
	if err != nil || n != 1 {
		t.Fatalf("DeleteExpired = %d, %v; want 1", n, err)
	}
	if err := st.DeleteCtx(ctx, "tok1"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := st.FindCtx(ctx, "tok1"); ok {
		t.Fatal("deleted session still found")
	}
}

func TestSessionStoreSkipsRedundantWrites(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	st := s.SessionStore()
	exp := time.Now().Add(time.Hour)
	st.CommitCtx(ctx, "t", []byte("same"), exp)
	// Change the row behind the store's back: a skipped write leaves it alone.
	s.sql.ExecContext(ctx, "UPDATE sessions SET data = 'marker' WHERE token = ?", storedSessionID("t"))
	st.CommitCtx(ctx, "t", []byte("same"), exp.Add(10*time.Second))
	row := func() string {
		var b []byte
		s.sql.QueryRowContext(ctx, "SELECT data FROM sessions WHERE token = ?", storedSessionID("t")).Scan(&b)
		return string(b)
	}
	if got := row(); got != "marker" {
		t.Fatalf("idle-only commit rewrote the row: %q", got)
	}
	// Changed data is always written, and read back from memory.
	st.CommitCtx(ctx, "t", []byte("new"), exp.Add(10*time.Second))
	if got := row(); got != "new" {
		t.Fatalf("changed data not written: %q", got)
	}
	if b, _, _ := st.FindCtx(ctx, "t"); string(b) != "new" {
		t.Fatalf("find after commit: %q", b)
	}
	// A second store (a restarted server) reads the table.
	if b, ok, _ := s.SessionStore().FindCtx(ctx, "t"); !ok || string(b) != "new" {
		t.Fatalf("fresh store: %q %v", b, ok)
	}
}

// TestSessionIDsStoredHashed: the table never holds a session id a copy of
// the database could replay.
func TestSessionIDsStoredHashed(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	const id = "Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5"
	if err := s.SessionStore().CommitCtx(ctx, id, []byte("data"), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	var stored string
	if err := s.sql.QueryRowContext(ctx, "SELECT token FROM sessions").Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored == id || len(stored) != 64 {
		t.Fatalf("stored session id %q: want its SHA-256, not the id", stored)
	}
	if b, ok, _ := s.SessionStore().FindCtx(ctx, id); !ok || string(b) != "data" {
		t.Fatalf("a fresh store cannot find the session by its id: %q %v", b, ok)
	}
}

func TestErrorsAreTyped(t *testing.T) {
	s, _ := newTestStore(t)
	_, err := s.UserByUsername(context.Background(), "nobody")
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
}

// TestReopenSkipsMigrationsWhenCurrent: a second Open of a current database
// (what every CLI command does) checks goose's table and applies nothing;
// a missing version is still applied.
func TestReopenSkipsMigrationsWhenCurrent(t *testing.T) {
	s, dir := newTestStore(t)
	ctx := context.Background()
	if behind, err := s.schemaState(ctx); err != nil || behind {
		t.Fatalf("a freshly migrated store is behind (%v)", err)
	}
	if err := s.db.Exec("DELETE FROM goose_db_version WHERE version_id = 70").Error; err != nil {
		t.Fatal(err)
	}
	if err := s.db.Exec("DROP INDEX workbenches_owner_created; DROP INDEX usage_intervals_unsettled_user; DROP INDEX usage_intervals_unsettled_wb; DROP INDEX ledger_workbench_amount; DROP INDEX storage_intervals_unsettled_user").Error; err != nil {
		t.Fatal(err)
	}
	if behind, _ := s.schemaState(ctx); !behind {
		t.Fatal("a store missing version 70 counts as current")
	}
	again, err := Open(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if behind, _ := again.schemaState(ctx); behind || again.SchemaBehind() {
		t.Fatal("reopening did not apply the missing migration")
	}
}

// A backup's copy (Backup and BackupReplacing alike) says when it was
// taken; the live database does not: a database restored from the copy
// knows that containers started after then may be the portal's own doing.
func TestBackupCopySaysWhenItWasTaken(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	for name, backup := range map[string]func(context.Context, string) error{"Backup": s.Backup, "BackupReplacing": s.BackupReplacing} {
		out := filepath.Join(t.TempDir(), name, DBFileName)
		os.MkdirAll(filepath.Dir(out), 0o755)
		before := time.Now().UTC()
		if err := backup(ctx, out); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := Open(ctx, filepath.Dir(out), nil)
		if err != nil {
			t.Fatal(err)
		}
		taken, err := b.BackupTakenAt(ctx)
		b.Close()
		if err != nil || taken.Before(before) || taken.After(time.Now().UTC()) {
			t.Errorf("%s: the copy says it was taken at %v (%v), want between %v and now", name, taken, err, before)
		}
	}
	if live, err := s.BackupTakenAt(ctx); err != nil || !live.IsZero() {
		t.Errorf("the live database says it is a backup taken at %v (%v)", live, err)
	}
}
