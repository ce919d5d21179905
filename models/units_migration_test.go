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

// A database from before GPU units (schema 40) keeps its bindings and
// rates: migration 50 turns each GPU allocation into a whole-GPU unit, keeps
// every rate, and flavors and intervals read back as whole GPUs. Down and
// up again loses no whole-GPU binding.
func TestMigrationGPUUnits(t *testing.T) {
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
	if _, err := p.UpTo(ctx, 40); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for _, q := range []string{
		`INSERT INTO users (id, username, password_hash, role, created_at, updated_at) VALUES (1, 'old', 'x', 'user', ?, ?)`,
		`INSERT INTO images (id, name, image, start_command, created_at, updated_at) VALUES (1, 'img', 'img:1', 'x', ?, ?)`,
		`INSERT INTO flavors (id, name, gpu_model, gpu_count, cpu_milli, memory_mib, shm_mib, enabled, created_at, updated_at) VALUES (1, 'old 2', 'H100', 2, 1000, 1024, 64, 1, ?, ?)`,
		`INSERT INTO workbenches (id, name, owner_id, image_id, flavor_id, state, token, created_at, updated_at) VALUES ('wb-old', 'old', 1, 1, 1, 'running', 't', ?, ?)`,
	} {
		if _, err := raw.ExecContext(ctx, q, now, now); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	for _, g := range []string{"GPU-a", "GPU-b"} {
		if _, err := raw.ExecContext(ctx, `INSERT INTO gpu_allocations (gpu_uuid, workbench_id, gpu_model, allocated_at) VALUES (?, 'wb-old', 'H100', ?)`, g, now); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := raw.ExecContext(ctx, `INSERT INTO price_rates (resource, gpu_model, micros, effective_from, created_by, created_at) VALUES ('gpu', 'H100', 3000000, ?, 'seed', ?)`, now, now); err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(ctx, 50); err != nil {
		t.Fatalf("migrate to 50: %v", err)
	}
	check := func(when string) {
		t.Helper()
		var n int
		if err := raw.QueryRowContext(ctx, `SELECT COUNT(*) FROM gpu_allocations WHERE kind = 'gpu' AND unit_id = gpu_uuid AND workbench_id = 'wb-old'`).Scan(&n); err != nil || n != 2 {
			t.Fatalf("%s: %d whole-GPU units (%v), want 2", when, n, err)
		}
		var kind string
		if err := raw.QueryRowContext(ctx, `SELECT unit_kind FROM flavors WHERE id = 1`).Scan(&kind); err != nil || kind != "gpu" {
			t.Fatalf("%s: old flavor's unit kind %q (%v)", when, kind, err)
		}
		// The whole-GPU index stops a second binding of a GPU.
		if _, err := raw.ExecContext(ctx, `INSERT INTO gpu_allocations (unit_id, kind, gpu_uuid, workbench_id, gpu_model, allocated_at) VALUES ('x', 'gpu', 'GPU-a', 'wb-old', 'H100', ?)`, now); err == nil {
			t.Fatalf("%s: a GPU bound whole twice", when)
		}
	}
	check("after up")
	if _, err := p.DownTo(ctx, 40); err != nil {
		t.Fatalf("down to 40: %v", err)
	}
	var n int
	if err := raw.QueryRowContext(ctx, `SELECT COUNT(*) FROM gpu_allocations WHERE workbench_id = 'wb-old'`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("after down: %d allocations (%v)", n, err)
	}
	if _, err := p.UpTo(ctx, 50); err != nil {
		t.Fatalf("up again: %v", err)
	}
	check("after down and up")
	raw.Close()

	s, err := Open(ctx, dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	wb, err := s.WorkbenchByID(ctx, "wb-old")
	if err != nil || len(wb.Units) != 2 || wb.Units[0].Kind != UnitGPU || wb.GPUs[0] != "GPU-a" || wb.Shared {
		t.Fatalf("old workbench read back: %+v (%v)", wb, err)
	}
	cur, err := s.CurrentPrices(ctx, now.Add(time.Second))
	if err != nil || cur[PriceKey("gpu", "H100")].Micros != 3_000_000 {
		t.Fatalf("old rate after migration: %+v (%v)", cur, err)
	}
}
