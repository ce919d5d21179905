package models

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/pressly/goose/v3"
)

// A database written while a flavor's CPU share was a REAL number of cores
// (schema 22) keeps its flavors: migration 23 turns each into integer
// milli-cores rounded to the nearest one, so 2.01 cores (stored as
// 2.00999…) becomes 2010 m, not the 2009 m that truncation gave.
func TestMigrationFlavorCPUCoresToMilli(t *testing.T) {
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
	if _, err := p.UpTo(ctx, 22); err != nil {
		t.Fatal(err)
	}
	if v, _ := p.GetDBVersion(ctx); v != 22 {
		t.Fatalf("old schema is at %d, want 22", v)
	}
	// Cores as the old code stored them: a Go float64 bound to a REAL.
	cases := []struct {
		cores float64
		milli int64
	}{
		{0.1, 100}, {0.25, 250}, {0.333, 333}, {0.7, 700}, {1, 1000}, {1.005, 1005},
		{1.1, 1100}, {2.01, 2010}, {2.29, 2290}, {4.35, 4350}, {8.2, 8200}, {16.55, 16550},
		{63.99, 63990}, {128, 128000}, {512, 512000},
	}
	for i, c := range cases {
		if _, err := raw.ExecContext(ctx, `INSERT INTO flavors (name, gpu_model, gpu_count, cpu_cores, memory_gib, shm_mib, enabled, created_at, updated_at)
			VALUES (?, '', 0, ?, 4, 1024, 1, ?, ?)`, fmt.Sprintf("old %d", i), c.cores, time.Now(), time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	// The case the issue names: the REAL read back is not 2.01.
	var back float64
	if err := raw.QueryRowContext(ctx, `SELECT cpu_cores * 1000 FROM flavors WHERE name = 'old 7'`).Scan(&back); err != nil {
		t.Fatal(err)
	}
	if int64(back) != 2009 {
		t.Logf("note: 2.01 × 1000 reads back as %v here (truncation would give %d)", back, int64(back))
	}
	raw.Close()

	s, err := Open(ctx, dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	defer s.Close()
	if v, _ := s.SchemaVersion(ctx); v < 23 {
		t.Fatalf("schema %d after open", v)
	}
	for i, c := range cases {
		fl, err := s.FlavorByNameOrID(ctx, fmt.Sprintf("old %d", i))
		if err != nil {
			t.Fatal(err)
		}
		if int64(fl.CPUMilli) != c.milli {
			t.Errorf("%v cores became %d milli-cores, want %d", c.cores, fl.CPUMilli, c.milli)
		}
	}
	// The old column is gone: nothing can read a float share by mistake.
	if err := s.sql.QueryRowContext(ctx, "SELECT cpu_cores FROM flavors").Scan(new(float64)); err == nil {
		t.Fatal("flavors.cpu_cores still exists")
	}
}
