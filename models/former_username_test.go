package models

import (
	"context"
	"database/sql"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/pressly/goose/v3"
)

// A deleted account's bills still say whose the money was: by user
// "stu11 (deleted-N)", by workbench "stu11 (deleted-N)/lab (deleted, id)"
// in everyone's lines, and a new account given the old name is another
// row. An instructor who removed a class at the end of term read only
// deleted-3, deleted-11 ….
func TestBillsNameADeletedAccountByItsFormerName(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	if _, err := s.CreateUser(ctx, NewUser{Username: "root", Password: "long-enough-pw", Role: RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	stu, err := s.CreateUser(ctx, NewUser{Username: "stu11", Password: "long-enough-pw"})
	if err != nil {
		t.Fatal(err)
	}
	at := MonthStart(s.now())
	groupLine(t, s, stu.ID, "", at, 2_000_000)
	if _, err := s.DeleteUser(ctx, stu.ID); err != nil {
		t.Fatal(err)
	}
	again, err := s.CreateUser(ctx, NewUser{Username: "stu11", Password: "long-enough-pw"})
	if err != nil {
		t.Fatal(err)
	}
	groupLine(t, s, again.ID, "", at.Add(time.Hour), 3_000_000)

	old := "stu11 (" + TombstoneName(stu.ID) + ")"
	byUser := keyed(t)(s.UsageSummary(ctx, at, at.AddDate(0, 1, 0), "user", 0))
	if byUser[old] != 2_000_000 || byUser["stu11"] != 3_000_000 || len(byUser) != 2 {
		t.Fatalf("by user %v; want %q 2.00 and the new stu11 3.00 apart", byUser, old)
	}
	byWB := keyed(t)(s.UsageSummary(ctx, at, at.AddDate(0, 1, 0), "workbench", 0))
	if byWB[old+"/wb"] != 2_000_000 || byWB["stu11/wb"] != 3_000_000 {
		t.Fatalf("by workbench %v; want %q and stu11/wb apart", byWB, old+"/wb")
	}
}

// Migration 168 gives accounts deleted before it their former name from
// their user.delete audit row, so last term's bills read as this term's.
func TestMigrationFormerUsernameFromTheAuditLog(t *testing.T) {
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
	if _, err := p.UpTo(ctx, 167); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if _, err := raw.ExecContext(ctx, `INSERT INTO users (id, username, password_hash, role, created_at, updated_at, deleted_at, home_key)
		VALUES (7, 'deleted-7', '', 'user', ?, ?, ?, 'deleted-7')`, now, now, now); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `INSERT INTO users (id, username, password_hash, role, created_at, updated_at, home_key)
		VALUES (8, 'stu07', 'x', 'user', ?, ?, 'stu07')`, now, now); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `INSERT INTO audit_log (at, actor, action, target, before, after) VALUES (?, 'root', 'user.delete', 'stu07', '{"username":"stu07"}', '{"username":"deleted-7","removed":{}}')`, now); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	s, err := Open(ctx, dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	defer s.Close()
	var former7, former8 string
	if err := s.sql.QueryRowContext(ctx, "SELECT (SELECT former_username FROM users WHERE id = 7), (SELECT former_username FROM users WHERE id = 8)").Scan(&former7, &former8); err != nil {
		t.Fatal(err)
	}
	if former7 != "stu07" || former8 != "" {
		t.Fatalf("former names %q and %q; want stu07 for the tombstone and none for the live account", former7, former8)
	}
}
