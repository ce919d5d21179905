package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// On a full or read-only data disk a command said only SQLite's "database
// or disk is full". It now names the database and what to do, after
// SQLite's own words. (Store.QueryOnly refuses writes as a read-only disk
// does.)
func TestCLIUnwritableDatabaseNamesIt(t *testing.T) {
	dir := portalData(t)
	if _, _, err := runCLI(t, "ada-password-1\n", "user", "add", "ada", "--password-stdin", "--data-dir", dir); err != nil {
		t.Fatal(err)
	}
	ctx := context.WithValue(context.Background(), storeHookKey{}, func(s *models.Store) {
		if err := s.QueryOnly(context.Background(), true); err != nil {
			t.Error(err)
		}
	})
	db, _ := filepath.Abs(filepath.Join(dir, models.DBFileName))
	for _, args := range [][]string{
		{"ledger", "credit", "ada", "12.50", "--reason", "outage", "--data-dir", dir},
		{"user", "add", "bob", "--data-dir", dir},
	} {
		var out, errb bytes.Buffer
		err := run(ctx, args, strings.NewReader(""), &out, &errb)
		if !models.Unwritable(err) {
			t.Fatalf("%v on a database that refuses writes: %v", args, err)
		}
		var msg bytes.Buffer
		exitCode(err, &msg)
		for _, want := range []string{"attempt to write a readonly database", "the portal's database " + db + " cannot be written", "full or read-only", "df -h " + dir} {
			if !strings.Contains(msg.String(), want) {
				t.Errorf("%v: %q lacks %q", args, msg.String(), want)
			}
		}
	}
}

// `workbench serve` on a data disk that refuses writes printed SQLite's
// bare words at start ("attempt to write a readonly database"), as the
// other commands did before: it now names the database and what to do
// too.
func TestServeUnwritableDatabaseNamesIt(t *testing.T) {
	dir := portalData(t)
	ctx := models.WithOpenHook(context.Background(), func(s *models.Store) {
		if err := s.QueryOnly(context.Background(), true); err != nil {
			t.Error(err)
		}
	})
	// Bounded: a serve that started would run until the context ends.
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	db, _ := filepath.Abs(filepath.Join(dir, models.DBFileName))
	var out, errb bytes.Buffer
	err := run(ctx, []string{"serve", "--data-dir", dir, "--gpus", "none", "--addr", "127.0.0.1:0"}, strings.NewReader(""), &out, &errb)
	if !models.Unwritable(err) {
		t.Fatalf("serve on a database that refuses writes: %v\n%s%s", err, out.String(), errb.String())
	}
	var msg bytes.Buffer
	exitCode(err, &msg)
	for _, want := range []string{"attempt to write a readonly database", "the portal's database " + db + " cannot be written", "full or read-only", "df -h " + dir} {
		if !strings.Contains(msg.String(), want) {
			t.Errorf("serve: %q lacks %q", msg.String(), want)
		}
	}
}
