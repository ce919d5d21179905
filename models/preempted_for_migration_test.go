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

// Migration 176 gives workbenches preempted before it what the launch
// they yielded to asked for, out of the reason the preemption wrote, once:
// the page then reads only the column. Only a preempted workbench's
// reason is read, and only the whole pattern: an old preemption's reason
// without the words, a stopped workbench's reason and a reason that ends
// otherwise keep the column empty.
func TestMigrationPreemptedForFromTheReason(t *testing.T) {
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
	if _, err := p.UpTo(ctx, 175); err != nil {
		t.Fatal(err)
	}
	const needed = "priority interactive, 2 × H100 80GB HBM3 needed, 1 free"
	const head = "preempted: a higher-priority launch needed its GPUs ("
	rows := []struct{ id, state, reason, want string }{
		{"wb-manual", StatePreempted, head + needed + "; its home is kept; start it again when you like)", needed},
		{"wb-resume", StatePreempted, head + needed + "; its home is kept; it resumes when GPUs free up)", needed},
		// Preempted before the words were recorded (00172).
		{"wb-old", StatePreempted, head + "its home is kept; start it again when you like)", ""},
		// Not preempted: its reason is not a preemption's.
		{"wb-stopped", StateStopped, head + needed + "; its home is kept; start it again when you like)", ""},
		{"wb-other", StatePreempted, head + needed + "; its home is kept)", ""},
		{"wb-empty", StatePreempted, head + "; its home is kept; start it again when you like)", ""},
	}
	now := time.Now().UTC()
	for _, r := range rows {
		if _, err := raw.ExecContext(ctx, `INSERT INTO workbenches (id, name, owner_id, image_id, flavor_id, state, reason, token, created_at, updated_at)
			VALUES (?, ?, 1, 1, 1, ?, ?, 't', ?, ?)`, r.id, r.id, r.state, r.reason, now, now); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()

	s, err := Open(ctx, dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	defer s.Close()
	for _, r := range rows {
		var got string
		if err := s.sql.QueryRowContext(ctx, "SELECT preempted_for FROM workbenches WHERE id = ?", r.id).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != r.want {
			t.Errorf("%s (%s, %q): preempted for %q, want %q", r.id, r.state, r.reason, got, r.want)
		}
	}
}
