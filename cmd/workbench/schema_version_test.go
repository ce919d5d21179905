package main

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	"workbench/models"
)

// setSchema edits goose's record of applied migrations in dir's database
// directly, as an older or a newer binary would have left it.
func setSchema(t *testing.T, dir, stmt string) {
	t.Helper()
	db, err := sql.Open("sqlite3", filepath.Join(dir, models.DBFileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(stmt); err != nil {
		t.Fatal(err)
	}
}

func appliedMax(t *testing.T, dir string) int64 {
	t.Helper()
	db, err := sql.Open("sqlite3", filepath.Join(dir, models.DBFileName))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int64
	if err := db.QueryRow("SELECT MAX(version_id) FROM goose_db_version WHERE is_applied").Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// A command of a newer binary does not upgrade the database under the
// portal that runs (an older one): it says the database is older and
// leaves it alone; `backup` copies it as it is, so a backup taken before
// an upgrade is of the schema before it.
func TestCommandsNeverMigrate(t *testing.T) {
	dir := portalData(t)
	newest := appliedMax(t, dir)
	setSchema(t, dir, "DELETE FROM goose_db_version WHERE version_id = (SELECT MAX(version_id) FROM goose_db_version)")
	for _, args := range [][]string{{"user", "add", "bob"}, {"token", "create", "admin"}} {
		if _, _, err := runCLI(t, "correct-horse-battery\n", append(args, "--data-dir", dir)...); err == nil || !strings.Contains(err.Error(), "older version of workbench") {
			t.Errorf("%v on an older schema: %v, want it refused", args, err)
		}
	}
	backup := filepath.Join(t.TempDir(), "b.db")
	if _, _, err := runCLI(t, "", "backup", backup, "--data-dir", dir); err != nil {
		t.Fatalf("backup of an older schema: %v", err)
	}
	if got := appliedMax(t, dir); got == newest {
		t.Fatalf("a command upgraded the database to %d", got)
	}
}

// A database upgraded by a newer binary is refused by this one, the
// portal and every command alike: it would write rows without the newer
// columns' rules.
func TestDatabaseFromANewerVersionRefused(t *testing.T) {
	dir := portalData(t)
	setSchema(t, dir, "INSERT INTO goose_db_version (version_id, is_applied) VALUES (99999, 1)")
	if _, err := models.Open(context.Background(), dir, nil); !errors.Is(err, models.ErrSchemaNewer) {
		t.Fatalf("open: %v, want ErrSchemaNewer", err)
	}
	if _, _, err := runCLI(t, "", "token", "create", "admin", "--data-dir", dir); err == nil || !strings.Contains(err.Error(), "newer version of workbench") {
		t.Fatalf("a command on a newer schema: %v", err)
	}
}
