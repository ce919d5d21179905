package models

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/pressly/goose/v3"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrate applies pending versioned migrations with goose. goose records each
// applied version in goose_db_version and runs every migration in its own
// transaction, so an upgrade is simply starting the new binary.
func (s *Store) migrate(ctx context.Context) error {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return err
	}
	// Out of order is allowed: features land from parallel branches, each
	// with its own block of version numbers, so a database that already has
	// a later block (a test install, a developer's data directory) must
	// still receive an earlier one that lands after it. Every migration is
	// independent of the blocks numbered around it.
	p, err := goose.NewProvider(goose.DialectSQLite3, s.sql, sub, goose.WithAllowOutofOrder(true))
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	results, err := p.Up(ctx)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	for _, r := range results {
		s.log.Info("applied migration", "version", r.Source.Version, "file", r.Source.Path, "took", r.Duration)
	}
	return nil
}

// ErrSchemaNewer is a database upgraded by a newer workbench: this binary
// does not know its newest tables and must not run on it.
var ErrSchemaNewer = errors.New("the database was upgraded by a newer version of workbench")

// schemaState compares the migrations applied to the database with this
// binary's, by one query of goose's table (a CLI command such as
// `workbench token create` then costs that query, not goose's parse of
// every migration file). behind: some of this binary's are missing (a new
// database, or one from an older version; Open applies them unless told
// not to). A database holding a migration this binary does not have is
// refused (ErrSchemaNewer): an older binary started on it (an upgrade
// undone by reinstalling the old one) would write rows without the newer
// columns' rules.
func (s *Store) schemaState(ctx context.Context) (behind bool, err error) {
	want, err := embeddedVersions()
	if err != nil {
		return false, err
	}
	applied, err := s.appliedVersions(ctx)
	if err != nil {
		return true, nil // goose decides
	}
	known := make(map[int64]bool, len(want))
	for _, v := range want {
		known[v] = true
		behind = behind || !applied[v]
	}
	for v := range applied {
		if !known[v] && v != 0 {
			return behind, fmt.Errorf("%w (it has migration %d, which this binary does not): run the version that upgraded it, or restore a backup taken before the upgrade", ErrSchemaNewer, v)
		}
	}
	return behind, nil
}

// SchemaBehind reports whether the database lacks migrations this binary
// has (it was opened WithoutMigrations): the portal of this version
// applies them when it starts.
func (s *Store) SchemaBehind() bool { return s.schemaBehind }

// appliedVersions are the migrations goose recorded as applied (none when
// its table does not exist yet).
func (s *Store) appliedVersions(ctx context.Context) (map[int64]bool, error) {
	rows, err := s.sql.QueryContext(ctx, "SELECT version_id FROM goose_db_version WHERE is_applied")
	if err != nil {
		return nil, nil // no table: nothing applied
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out[v] = true
	}
	return out, rows.Err()
}

// SchemaVersion returns the newest applied migration version.
func (s *Store) SchemaVersion(ctx context.Context) (int64, error) {
	var v int64
	err := s.sql.QueryRowContext(ctx, "SELECT COALESCE(MAX(version_id), 0) FROM goose_db_version WHERE is_applied").Scan(&v)
	return v, err
}

// embeddedVersions are the versions of the embedded migration files
// (NNNNN_name.sql).
func embeddedVersions() ([]int64, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var out []int64
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		if !ok || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		v, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("migration %s: %w", e.Name(), err)
		}
		out = append(out, v)
	}
	return out, nil
}
