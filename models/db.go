// Package models owns the database: every query of the portal lives here.
// Callers pass ctx first and get domain structs back; nothing above this
// package imports gorm.
package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/mattn/go-sqlite3"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"workbench/models/pricing"
)

// DBFileName is the SQLite file inside the data directory.
const DBFileName = "workbench.db"

// Store is the portal's handle on its SQLite database.
type Store struct {
	db *gorm.DB
	// rdb is db with prepared statements, for the reads every page view
	// makes, outside transactions only (see reads.go).
	rdb *gorm.DB
	sql *sql.DB
	log *slog.Logger
	// path is the database file: a backup must never be written over it
	// or its companions (notOwnFile).
	path string
	now  func() time.Time

	// versions and the caches below keep read-mostly values between
	// requests until their tables are written (table_versions.go).
	// Pointers: a Store bound to a transaction (InTx) is a copy that
	// shares the counters but keeps caches of its own.
	versions  *tableVersions
	schedules *cached[map[string]pricing.Schedule]
	images    *cached[[]Image]
	flavors   *cached[[]Flavor]
	orphans   *cached[[]OrphanUnit]

	hashes *hashGate // bounds concurrent argon2id work (hash_gate.go)

	// writes remembers refused writes and write probes (WriteState).
	writes *writeHealth
	// kept holds audit rows of actions that happened while the database
	// refused them (audit_kept.go).
	kept *keptAudit

	// schemaBehind: the database lacks migrations of this binary (opened
	// WithoutMigrations; see SchemaBehind).
	schemaBehind bool
}

// Open opens (creating if needed) the database in dataDir and applies pending
// migrations. Several processes may open the same file at once (the server and
// a CLI command): WAL lets readers run beside the single writer, busy_timeout
// makes writers wait for each other instead of failing, and _txlock=immediate
// takes the write lock at BEGIN so a read-then-write transaction cannot be
// overtaken between its check and its write.
func Open(ctx context.Context, dataDir string, log *slog.Logger, opts ...OpenOption) (*Store, error) {
	var o openOptions
	for _, opt := range opts {
		opt(&o)
	}
	if log == nil {
		log = slog.Default()
	}
	if err := ensurePrivateDir(dataDir, log); err != nil {
		return nil, err
	}
	path := filepath.Join(dataDir, DBFileName)
	dsn := "file:" + path + "?_journal_mode=WAL&_busy_timeout=10000&_txlock=immediate&_foreign_keys=on&_synchronous=NORMAL"
	db, err := gorm.Open(sqlite.Open(dsn), &gorm.Config{
		Logger:                 logger.Discard,
		SkipDefaultTransaction: true, // single statements need no wrapping transaction
		// No PrepareStmt: inside a transaction gorm prepares a statement on
		// a second pooled connection, and with every connection held by a
		// transaction waiting in BEGIN IMMEDIATE that deadlocks until the
		// busy timeout (seen with 20 concurrent launches).
		NowFunc: func() time.Time { return time.Now().UTC() },
	})
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, err
	}
	sqlDB.SetMaxOpenConns(8)
	sqlDB.SetMaxIdleConns(8) // reopening a SQLite connection (and its pragmas) is costly
	sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	if err := sqlDB.PingContext(ctx); err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	_ = os.Chmod(path, 0o600)
	rdb, err := openPreparedReads(sqlDB)
	if err != nil {
		_ = sqlDB.Close()
		return nil, err
	}
	s := &Store{db: db, rdb: rdb, sql: sqlDB, log: log, path: path, now: func() time.Time { return time.Now().UTC() }, hashes: newHashGate(0),
		versions: &tableVersions{}, writes: &writeHealth{}, kept: &keptAudit{}}
	s.newCaches()
	if err := s.versions.register(db); err != nil {
		_ = sqlDB.Close()
		return nil, err
	}
	if err := s.registerWriteWatch(); err != nil {
		_ = sqlDB.Close()
		return nil, err
	}
	openHook(ctx, s)
	if s.schemaBehind, err = s.schemaState(ctx); err != nil {
		_ = sqlDB.Close()
		return nil, err
	}
	if o.noMigrate || !s.schemaBehind {
		return s, nil
	}
	if err := s.migrate(ctx); err != nil {
		_ = sqlDB.Close()
		return nil, err
	}
	s.schemaBehind = false
	return s, nil
}

// OpenOption changes how Open opens a database.
type OpenOption func(*openOptions)

type openOptions struct{ noMigrate bool }

// WithoutMigrations opens the database as it is: a command-line tool must
// not upgrade the schema under a running portal of the version before
// (which would then run on tables it does not know), and a backup taken
// before an upgrade must be of the schema before it. SchemaBehind says
// whether the schema is older than this binary's.
func WithoutMigrations() OpenOption { return func(o *openOptions) { o.noMigrate = true } }

// Close releases the database.
func (s *Store) Close() error { return s.sql.Close() }

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Ping answers whether the database responds (for /healthz).
func (s *Store) Ping(ctx context.Context) error {
	var one int
	return s.sql.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// Backup writes a consistent copy of the database to file while the portal
// keeps running (VACUUM INTO takes a read snapshot). The copy holds password
// hashes, session and Jupyter tokens, so it is readable by its owner only:
// the file is created 0600 (and must not exist) before SQLite fills it, so
// it is never readable by others, not even for a moment. A file already
// there is an error wrapping os.ErrExist (see BackupReplacing).
func (s *Store) Backup(ctx context.Context, file string) error {
	if err := s.notOwnFile(file); err != nil {
		return err
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		// The caller names the operation ("backup: …"): saying it here
		// too read "backup to X: backup: X already exists".
		return existsError(file)
	}
	if err != nil {
		return err
	}
	_ = f.Close()
	if _, err := s.sql.ExecContext(ctx, "VACUUM INTO ?", file); err != nil {
		_ = os.Remove(file)
		return fmt.Errorf("copy the database to %s: %w", file, err)
	}
	if err := s.stampBackup(ctx, file); err != nil {
		_ = os.Remove(file)
		return err
	}
	return os.Chmod(file, 0o600) // a umask cannot widen it, but be explicit
}

// backupTakenAtKey is the setting a backup's copy carries: when it was
// taken. The live database never has it (it is written into the copy
// only); a database restored from the copy keeps it, and reconciliation
// knows that a container started after it may have been started by the
// portal whose later records the restore threw away.
const backupTakenAtKey = "backup_taken_at"

// stampBackup writes into the copy at file when it was taken: after the
// copy, so that every heartbeat the copy holds is from before it.
func (s *Store) stampBackup(ctx context.Context, file string) error {
	db, err := sql.Open("sqlite3", file)
	if err != nil {
		return fmt.Errorf("mark the copy %s as a backup: %w", file, err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
		backupTakenAtKey, s.now().UTC().Format(time.RFC3339Nano)); err != nil {
		return fmt.Errorf("mark the copy %s as a backup: %w", file, err)
	}
	return db.Close()
}

// BackupTakenAt is when the backup this database was restored from was
// taken; zero for a database never restored from a `workbench backup`.
func (s *Store) BackupTakenAt(ctx context.Context) (time.Time, error) {
	v, err := s.Setting(ctx, backupTakenAtKey)
	if err != nil || v == "" {
		return time.Time{}, err
	}
	return time.Parse(time.RFC3339Nano, v)
}

// existsError is a backup's file already there; errors.Is(err,
// os.ErrExist) holds.
type existsError string

func (e existsError) Error() string        { return string(e) + " already exists" }
func (e existsError) Is(target error) bool { return target == os.ErrExist }

// BackupReplacing is Backup over a file that may exist already (a nightly
// job writing the same path): the copy is written to a new file beside it
// and renamed over it, so that file is always a whole backup, the old
// one until the new one is complete; a failed copy leaves it as it was.
func (s *Store) BackupReplacing(ctx context.Context, file string) error {
	// Renamed over the live database (or its -wal), the portal kept the
	// deleted files open and wrote on into them: the next command read
	// "database disk image is malformed" and what was written was lost.
	if err := s.notOwnFile(file); err != nil {
		return err
	}
	if fi, err := os.Stat(file); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", file)
	}
	// Same directory: a rename within one filesystem is atomic.
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*.tmp")
	if err != nil {
		return err
	}
	name := tmp.Name()
	_ = tmp.Close()
	// CreateTemp made it 0600 and empty, which VACUUM INTO accepts.
	if _, err := s.sql.ExecContext(ctx, "VACUUM INTO ?", name); err != nil {
		_ = os.Remove(name)
		return fmt.Errorf("copy the database to %s: %w", file, err)
	}
	if err := s.stampBackup(ctx, name); err != nil {
		_ = os.Remove(name)
		return err
	}
	if err := os.Chmod(name, 0o600); err != nil {
		_ = os.Remove(name)
		return err
	}
	if err := os.Rename(name, file); err != nil {
		_ = os.Remove(name)
		return err
	}
	return nil
}

// Common errors callers map to HTTP statuses.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("already exists")
)

// ValidationError names the field at fault so forms can show the message
// next to it and the API can return 400 with a code.
type ValidationError struct {
	Field   string
	Message string
	// Taken marks a well-formed value that something else already holds
	// (a name in use, a line already reversed): the API answers 409
	// conflict for it, as SPEC §8 lists conflicts, while a form still
	// shows the message beside its field.
	Taken bool
	// Code, when set, is the API's code instead of invalid_<Field>: a
	// parameter an address does not take is unknown_parameter on every
	// endpoint, whatever its name.
	Code string
}

func (e *ValidationError) Error() string { return e.Field + ": " + e.Message }

func invalid(field, format string, args ...any) error {
	return &ValidationError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// taken is invalid for a value already in use (ValidationError.Taken).
func taken(field, format string, args ...any) error {
	return &ValidationError{Field: field, Message: fmt.Sprintf(format, args...), Taken: true}
}

// collectInvalid gathers the errors of a validation that checks every
// field (a form sent with its name and its image both empty shows both at
// once): add keeps the first error of each field (later checks of a field
// often rest on earlier ones); err joins them (errors.Join), so errors.As
// still finds the first ValidationError for a caller that shows one (the
// API), and FieldErrors lists them all for a form.
type collectInvalid struct {
	list  []error
	seen  map[string]bool
	other error // not a field's: returned alone
}

func (c *collectInvalid) add(err error) {
	var ve *ValidationError
	switch {
	case err == nil:
	case !errors.As(err, &ve):
		if c.other == nil {
			c.other = err
		}
	case !c.seen[ve.Field]:
		if c.seen == nil {
			c.seen = map[string]bool{}
		}
		c.seen[ve.Field] = true
		c.list = append(c.list, err)
	}
}

func (c *collectInvalid) err() error {
	switch {
	case c.other != nil:
		return c.other
	case len(c.list) == 1:
		return c.list[0]
	}
	return errors.Join(c.list...) // nil for none
}

// FieldErrors lists every ValidationError in err, in order (none when it
// holds none).
func FieldErrors(err error) []*ValidationError {
	var out []*ValidationError
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if ve, ok := e.(*ValidationError); ok {
			out = append(out, ve)
			return
		}
		switch u := e.(type) {
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				walk(x)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return out
}

// notFound turns gorm's record-not-found into ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return ErrNotFound
	}
	return err
}

// uniqueViolation reports whether err is SQLite's UNIQUE (or PRIMARY KEY)
// constraint failure, by the driver's extended result code rather than by
// its message.
func uniqueViolation(err error) bool {
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return false
	}
	return se.ExtendedCode == sqlite3.ErrConstraintUnique || se.ExtendedCode == sqlite3.ErrConstraintPrimaryKey
}
