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
