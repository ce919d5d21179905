package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"workbench/models"
)

// README's checklist schedules `workbench backup --force` with a fixed
// path: the second night replaces the first night's copy (it failed with
// "backup to X: backup: X already exists"). Without --force an existing
// file is still refused, said once, with what to do. The copy replaced is
// whole: it holds what the database held the second time.
func TestBackupForceReplacesAScheduledPath(t *testing.T) {
	dir := portalData(t)
	ctx := context.Background()
	addUser := func(name string) {
		t.Helper()
		s, err := models.Open(ctx, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.CreateUser(ctx, models.NewUser{Username: name, Password: name + "-password-1"}); err != nil {
			t.Fatal(err)
		}
	}
	addUser("first")
	out := filepath.Join(t.TempDir(), "backup.db")
	if _, _, err := runCLI(t, "", "backup", "--force", out, "--data-dir", dir); err != nil {
		t.Fatalf("first night (no file yet): %v", err)
	}
	addUser("second")
	_, _, err := runCLI(t, "", "backup", out, "--data-dir", dir)
	if err == nil {
		t.Fatal("backup without --force over an existing file succeeded")
	}
	if want := "backup: " + out + " already exists; give --force to replace it"; err.Error() != want {
		t.Errorf("refusal %q, want %q", err, want)
	}
	if stdout, _, err := runCLI(t, "", "backup", "--force", out, "--data-dir", dir); err != nil || !strings.Contains(stdout, out) {
		t.Fatalf("second night with --force: %q %v", stdout, err)
	}
	fi, err := os.Stat(out)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("replaced backup: %v %v, want mode 0600", fi, err)
	}
	// No temporary file is left beside it.
	if ents, _ := os.ReadDir(filepath.Dir(out)); len(ents) != 1 {
		t.Errorf("beside the backup: %v, want only backup.db", ents)
	}
	copyDir := t.TempDir()
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(copyDir, models.DBFileName), data, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := models.Open(ctx, copyDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.UserByUsername(ctx, "second"); err != nil {
		t.Fatalf("the replaced backup lacks the user added before it: %v", err)
	}
}

// An operator ran `workbench backup --force /data/workbench.db` while the
// portal ran: "database copied", exit 0, and the portal wrote on into the
// deleted files it kept open — the next command read "database disk image
// is malformed" and what was written since was lost. The database and its
// -wal/-shm/-journal are refused, with or without --force, however FILE
// names them (another spelling, a symlink, a companion not there yet), and
// nothing is touched: the running portal's writes are still read after.
func TestBackupRefusesTheDatabaseItsOwnFiles(t *testing.T) {
	dir := portalData(t)
	ctx := context.Background()
	running, err := models.Open(ctx, dir, nil) // the portal: holds the database, its -wal and -shm open
	if err != nil {
		t.Fatal(err)
	}
	defer running.Close()
	if _, err := running.CreateUser(ctx, models.NewUser{Username: "before", Password: "before-password-1"}); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, models.DBFileName)
	absDB, _ := filepath.Abs(db)
	identity := func() map[string]os.FileInfo {
		m := map[string]os.FileInfo{}
		for _, s := range []string{"", "-wal", "-shm"} {
			fi, err := os.Stat(db + s)
			if err != nil {
				t.Fatalf("the portal's %s: %v", db+s, err)
			}
			m[s] = fi
		}
		return m
	}
	was := identity()
	entries := func() int { e, _ := os.ReadDir(dir); return len(e) }
	n := entries()

	links := t.TempDir()
	linkDB := filepath.Join(links, "to-db")
	linkDir := filepath.Join(links, "data")
	danglingJournal := filepath.Join(links, "to-journal")
	for old, nw := range map[string]string{db: linkDB, dir: linkDir, db + "-journal": danglingJournal} {
		if err := os.Symlink(old, nw); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ file, of, what string }{
		{db, absDB, "the portal's database itself"},
		{db + "-wal", absDB + "-wal", "the database's write-ahead log"},
		{db + "-shm", absDB + "-shm", "the database's shared-memory index"},
		{db + "-journal", absDB + "-journal", "the database's rollback journal"}, // not there: WAL mode
		{filepath.Join(dir, ".", "..", filepath.Base(dir), models.DBFileName), absDB, "the portal's database itself"},
		{linkDB, absDB, "the portal's database itself"},
		{filepath.Join(linkDir, models.DBFileName+"-wal"), absDB + "-wal", "the database's write-ahead log"},
		{filepath.Join(linkDir, models.DBFileName+"-journal"), absDB + "-journal", "the database's rollback journal"},
		{danglingJournal, absDB + "-journal", "the database's rollback journal"},
	} {
		for _, force := range []bool{true, false} {
			args := []string{"backup", c.file, "--data-dir", dir}
			if force {
				args = append(args, "--force")
			}
			stdout, _, err := runCLI(t, "", args...)
			want := "backup: " + c.file + " is " + c.what + " (" + c.of + "), which a running portal has open: " +
				"a backup must be another file, best outside the data directory; nothing was written"
			if err == nil || err.Error() != want {
				t.Errorf("backup %s (force %v): %q, %v\nwant the refusal %q", c.file, force, stdout, err, want)
			}
		}
	}
	for s, fi := range identity() {
		if !os.SameFile(fi, was[s]) {
			t.Errorf("%s was replaced", db+s)
		}
	}
	if got := entries(); got != n {
		t.Errorf("the data directory holds %d entries, was %d (a copy left beside the database?)", got, n)
	}
	if _, err := os.Lstat(db + "-journal"); err == nil {
		t.Errorf("a %s-journal was written", db)
	}
	// The portal writes on; the next command reads what it wrote.
	if _, err := running.CreateUser(ctx, models.NewUser{Username: "after", Password: "after-password-1"}); err != nil {
		t.Fatal(err)
	}
	next, err := models.Open(ctx, dir, nil, models.WithoutMigrations())
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	for _, name := range []string{"before", "after"} {
		if _, err := next.UserByUsername(ctx, name); err != nil {
			t.Errorf("the next command does not find user %q: %v", name, err)
		}
	}
	// Another file beside them is still a backup.
	if _, _, err := runCLI(t, "", "backup", "--force", filepath.Join(dir, "backup.db"), "--data-dir", dir); err != nil {
		t.Errorf("a backup beside the database: %v", err)
	}
}
