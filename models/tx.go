package models

import (
	"context"

	"gorm.io/gorm"
)

// InTx runs fn with a Store bound to one immediate transaction: every
// gorm-backed Store method fn calls on tx commits or rolls back together
// (a method that opens its own transaction nests as a savepoint). Services
// use it to make a change and write its audit row atomically. A method that
// goes through the raw *sql.DB instead of gorm is not part of the
// transaction (and a write through it would wait on the transaction's lock):
// give it a gorm path before calling it from InTx, as EgressSetting has.
func (s *Store) InTx(ctx context.Context, fn func(tx *Store) error) error {
	written := &writtenTables{}
	err := s.db.WithContext(ctx).Transaction(func(gtx *gorm.DB) error {
		gtx = gtx.Set(writtenKey, written)
		bound := *s
		bound.db, bound.rdb = gtx, gtx // reads see the transaction's writes
		// Caches of its own, over the shared ones until it writes their
		// tables: a value loaded inside the transaction must not outlive a
		// rollback in the shared ones.
		bound.boundCaches(s, written)
		return fn(&bound)
	})
	if err == nil {
		// Once more now that it is committed: a reader between the
		// statement and the commit read the old rows under the new
		// version and kept them (a flavor saved with its audit row was
		// missing from the launch form for up to cacheTTL).
		written.bumpAll(s.versions)
	} else if Unwritable(err) {
		// Its commit, which no statement's watch sees (write_health.go).
		s.noteUnwritable(err)
	}
	return err
}

// Snapshot runs fn with a Store whose reads all see one state of the
// database, for figures summed from two tables that a writer moves rows
// between — a month's ledger and its unbilled intervals — where two
// separate reads can straddle the move and count it twice or not at all.
//
// It is a deferred read transaction on a connection of its own: in WAL
// mode its first read fixes what every later read sees, and it takes no
// lock that would hold writers back (a write transaction, BEGIN
// IMMEDIATE as the DSN makes database/sql's, starved billing's writes
// under readers). fn must only read.
func (s *Store) Snapshot(ctx context.Context, fn func(snap *Store) error) error {
	conn, err := s.sql.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN DEFERRED"); err != nil {
		return err
	}
	// A read transaction has nothing to keep: ended either way.
	defer conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	g := s.db.Session(&gorm.Session{NewDB: true, Context: ctx, SkipDefaultTransaction: true})
	g.Statement.ConnPool = conn
	bound := *s
	bound.db, bound.rdb = g, g
	// The shared caches' values are read when valid at the current
	// version. A price list or catalog is not what a snapshot is for (the
	// ledger and the unbilled intervals agreeing); one changed a moment
	// before the snapshot's first read is already a new version.
	bound.boundCaches(s, nil)
	return fn(&bound)
}

// AuditRecord is one audit row to write: who did what to what, with the
// state before and after (marshalled to JSON; nil → "").
type AuditRecord struct {
	Actor, Action, Target string
	Before, After         any
}

// WriteAudit appends r; called on a Store from InTx it commits with the
// change it records.
func (s *Store) WriteAudit(ctx context.Context, r AuditRecord) error {
	return s.Audit(ctx, r.Actor, r.Action, r.Target, r.Before, r.After)
}
