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

// A database written before memory became MiB (schema 39) keeps its flavors
// and usage intervals: migration 40 turns whole GiB into MiB (× 1024), and
// the store then reads them back as such.
func TestMigrationMemoryGiBToMiB(t *testing.T) {
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
	if _, err := p.UpTo(ctx, 39); err != nil {
		t.Fatal(err)
	}
	if v, _ := p.GetDBVersion(ctx); v >= 40 {
		t.Fatalf("old schema is at %d", v)
	}
	// An old flavor and an old interval (parents off: only the columns matter).
	if _, err := raw.ExecContext(ctx, `INSERT INTO flavors (name, gpu_model, gpu_count, cpu_milli, memory_gib, shm_mib, enabled, created_at, updated_at)
		VALUES ('old 24', '', 0, 2000, 24, 1024, 1, ?, ?)`, time.Now(), time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, `INSERT INTO usage_intervals (workbench_id, user_id, cpu_milli, memory_gib, started_at, heartbeat_at)
		VALUES ('wb-old', 7, 2000, 24, ?, ?)`, time.Now(), time.Now()); err != nil {
		t.Fatal(err)
	}
	raw.Close()

	s, err := Open(ctx, dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("migrate: %v", err)
	}
	defer s.Close()
	if v, _ := s.SchemaVersion(ctx); v < 40 {
		t.Fatalf("schema %d after open", v)
	}
	fl, err := s.FlavorByNameOrID(ctx, "old 24")
	if err != nil {
		t.Fatal(err)
	}
	if fl.MemoryMiB != 24*1024 {
		t.Fatalf("flavor memory %d MiB, want %d", fl.MemoryMiB, 24*1024)
	}
	var iv UsageInterval
	if err := s.db.WithContext(ctx).Where("workbench_id = ?", "wb-old").First(&iv).Error; err != nil {
		t.Fatal(err)
	}
	if iv.MemoryMiB != 24*1024 {
		t.Fatalf("interval memory %d MiB, want %d", iv.MemoryMiB, 24*1024)
	}
	// The old column is gone: nothing can read stale GiB by mistake.
	if err := s.sql.QueryRowContext(ctx, "SELECT memory_gib FROM flavors").Scan(new(int)); err == nil {
		t.Fatal("flavors.memory_gib still exists")
	}
	// A flavor of a fraction of a GiB now stores exactly.
	half := &Flavor{Name: "half", CPUMilli: 500, MemoryMiB: 1536, ShmMiB: 64, Enabled: true}
	if err := s.CreateFlavor(ctx, half); err != nil {
		t.Fatal(err)
	}
	if got, err := s.FlavorByID(ctx, half.ID); err != nil || got.MemoryMiB != 1536 {
		t.Fatalf("1536 MiB stored, %+v read back (%v)", got, err)
	}
}
