package models

import (
	"context"
	"sync"
	"time"
)

// KeptAuditMax bounds the audit rows kept in memory while the database
// cannot be written (AuditHappened). The first ones are kept: they show
// how the incident began; later ones are counted, logged and told by one
// row (audit.rows_lost) once the database can be written.
const KeptAuditMax = 1000

// keptAudit holds the rows of actions that happened while the database
// refused their audit rows (its disk full or read-only), oldest first,
// until they can be written. A pointer in Store: the copy a transaction
// uses (InTx) shares it.
type keptAudit struct {
	mu   sync.Mutex
	rows []AuditEntry
	// lost counts the rows not kept (past KeptAuditMax), and lostFrom and
	// lostTo their times.
	lost             int
	lostFrom, lostTo time.Time
	// flushing: one writer at a time (a row kept while it writes waits
	// for the next flush).
	flushing sync.Mutex
}

// AuditHappened appends the audit row of an action that has happened
// whatever the database says — a sign-in, an SSH connection, sudo, work
// done on the engine — stamped now. When the database refuses the write
// because of where it lives (Unwritable: its disk full or read-only) the
// row is kept in memory, with its time and via, and written by the next
// AuditHappened or FlushKeptAudit that can write: a sign-in during a full
// disk must show in the audit log once the disk is fixed. The refusal is
// still returned, for the caller to log. Rows kept before this one are
// written first, so the log keeps their order.
//
// Not for the audit row of a change (WriteAudit in InTx): when that
// transaction is refused, the change did not happen either.
func (s *Store) AuditHappened(ctx context.Context, r AuditRecord) error {
	e := AuditEntry{At: s.now(), Actor: r.Actor, Action: r.Action, Target: r.Target, Before: jsonText(r.Before), After: jsonText(r.After), Via: auditVia(ctx)}
	if err := s.FlushKeptAudit(ctx); err != nil {
		if Unwritable(err) {
			s.keepAudit(e)
		}
		return err
	}
	err := s.db.WithContext(ctx).Create(&e).Error
	if Unwritable(err) {
		s.keepAudit(e)
	}
	return err
}

// keepAudit keeps e to be written later, or counts it lost past
// KeptAuditMax.
func (s *Store) keepAudit(e AuditEntry) {
	k := s.kept
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.rows) < KeptAuditMax {
		k.rows = append(k.rows, e)
		return
	}
	if k.lost == 0 {
		k.lostFrom = e.At
	}
	k.lost++
	k.lostTo = e.At
	s.log.Error("audit row lost: the database cannot be written and the rows kept in memory are at their bound", "bound", KeptAuditMax,
		"at", e.At, "actor", e.Actor, "action", e.Action, "target", e.Target, "after", e.After, "via", e.Via)
}

// KeptAudit is how many audit rows wait in memory for the database.
func (s *Store) KeptAudit() int {
	k := s.kept
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.rows)
}

// FlushKeptAudit writes the audit rows kept while the database could not
// be written, with their own times, in one transaction (all or none; the
// next flush tries again), then a row audit.rows_lost for those past the
// bound. Nothing kept: nothing written. Called before each AuditHappened
// and periodically by the portal.
func (s *Store) FlushKeptAudit(ctx context.Context) error {
	k := s.kept
	k.flushing.Lock()
	defer k.flushing.Unlock()
	k.mu.Lock()
	rows := append([]AuditEntry(nil), k.rows...)
	lost, from, to := k.lost, k.lostFrom, k.lostTo
	k.mu.Unlock()
	if len(rows) == 0 && lost == 0 {
		return nil
	}
	n := len(rows) // the kept rows this writes
	if lost > 0 {
		rows = append(rows, AuditEntry{At: s.now(), Actor: "system", Action: "audit.rows_lost",
			After: jsonText(map[string]any{"rows": lost, "from": from, "to": to, "kept_bound": KeptAuditMax})})
	}
	err := s.InTx(ctx, func(tx *Store) error {
		return tx.db.WithContext(ctx).CreateInBatches(rows, 100).Error
	})
	if err != nil {
		return err
	}
	k.mu.Lock()
	k.rows = k.rows[n:] // rows kept while this wrote stay
	k.lost -= lost
	k.mu.Unlock()
	s.log.Info("audit rows kept while the database could not be written are written now", "rows", n, "lost", lost)
	return nil
}

// LogKeptAudit logs the audit rows still kept, each at ERROR with its
// fields: the portal is stopping with the database still unwritable, and
// the log is the only place left for them.
func (s *Store) LogKeptAudit() {
	k := s.kept
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, e := range k.rows {
		s.log.Error("audit row not written (the database could not be written until the portal stopped)",
			"at", e.At, "actor", e.Actor, "action", e.Action, "target", e.Target, "before", e.Before, "after", e.After, "via", e.Via)
	}
	if k.lost > 0 {
		s.log.Error("audit rows lost while the database could not be written", "rows", k.lost, "from", k.lostFrom, "to", k.lostTo)
	}
}
