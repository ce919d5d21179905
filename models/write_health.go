package models

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"time"

	"gorm.io/gorm"
)

// WriteProbeEvery bounds how often WriteState writes to find out whether
// the database can be written: at most one small write per interval, and
// only while something asks (/healthz, /metrics).
const WriteProbeEvery = 30 * time.Second

// writeProbeKey is the setting the probe writes (the time of the probe);
// nothing reads it.
const writeProbeKey = "write_probe_at"

// WriteCheck is whether the database can be written, as last learned.
type WriteCheck struct {
	Writable bool
	// At is when it was learned: a probe, or a write that failed.
	At time.Time
	// Since is, when not writable, when the writes began to fail (the
	// first failure seen since the database was last found writable).
	Since time.Time
	// Err is, when not writable, the refused write's error (SQLite's
	// words: "database or disk is full", "attempt to write a readonly
	// database").
	Err error
}

// writeHealth is the store's memory of refused writes and of its probes.
// A pointer in Store: the copy a transaction uses (InTx) shares it.
type writeHealth struct {
	mu      sync.Mutex
	last    WriteCheck // zero: nothing learned yet
	told    bool       // the log has said that writes fail, and not since that they work
	probing sync.Mutex // one probe at a time; callers meanwhile get last
}

// registerWriteWatch makes every write made through gorm that the
// database refuses (Unwritable) count as news for WriteState, at no cost
// to the writes that succeed.
func (s *Store) registerWriteWatch() error {
	note := func(db *gorm.DB) {
		if db.Error != nil && Unwritable(db.Error) {
			s.noteUnwritable(db.Error)
		}
	}
	cb := s.db.Callback()
	if err := cb.Create().After("gorm:create").Register("workbench:write_watch", note); err != nil {
		return err
	}
	if err := cb.Update().After("gorm:update").Register("workbench:write_watch", note); err != nil {
		return err
	}
	if err := cb.Delete().After("gorm:delete").Register("workbench:write_watch", note); err != nil {
		return err
	}
	return cb.Raw().After("gorm:raw").Register("workbench:write_watch", note)
}

// NoteWriteRefused tells WriteState of a write the database refused
// (Unwritable) that did not go through the store's watched paths (a gorm
// transaction's commit, the session store's save); other errors are
// ignored. The handlers call it for every refused write they answer.
func (s *Store) NoteWriteRefused(err error) {
	if s != nil && Unwritable(err) {
		s.noteUnwritable(err)
	}
}

// noteUnwritable records a write the database refused because of where
// it lives (Unwritable).
func (s *Store) noteUnwritable(err error) {
	now := s.now()
	w := s.writes
	w.mu.Lock()
	defer w.mu.Unlock()
	since := w.last.Since
	if w.last.At.IsZero() || w.last.Writable {
		since = now
	}
	w.last = WriteCheck{At: now, Since: since, Err: err}
}

// WriteState answers whether the database can be written, without a write
// per call: a refused write (a statement made through gorm, or a
// transaction made with InTx, seen as it happens) or a probe younger than
// WriteProbeEvery answers; otherwise one small write (a setting nothing
// reads) finds out. A write refused elsewhere (a gorm transaction's begin
// or commit) is found by the next probe. A probe that cannot finish for
// another reason (the caller's deadline while others hold the write lock)
// changes nothing: the last answer stands, writable when there is none.
// The log says once when writes begin to fail, naming the database, and
// once when they work again.
func (s *Store) WriteState(ctx context.Context) WriteCheck {
	w := s.writes
	w.mu.Lock()
	last := w.last
	w.mu.Unlock()
	now := s.now()
	if !last.At.IsZero() && now.Sub(last.At) < WriteProbeEvery {
		return s.tell(last)
	}
	if !w.probing.TryLock() {
		return known(last)
	}
	defer w.probing.Unlock()
	_, err := s.sql.ExecContext(ctx, "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
		writeProbeKey, now.UTC().Format(time.RFC3339Nano))
	switch {
	case err == nil:
		w.mu.Lock()
		// A write refused while the probe ran is newer news.
		if w.last.Writable || w.last.At.IsZero() || !w.last.At.After(now) {
			w.last = WriteCheck{Writable: true, At: now}
		}
		last = w.last
		w.mu.Unlock()
		return s.tell(last)
	case Unwritable(err):
		s.noteUnwritable(err)
		w.mu.Lock()
		last = w.last
		w.mu.Unlock()
		return s.tell(last)
	default:
		if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			s.log.Warn("database write probe", "err", err)
		}
		return known(last)
	}
}

// tell logs a change of c from what the log last said, and returns c.
func (s *Store) tell(c WriteCheck) WriteCheck {
	w := s.writes
	w.mu.Lock()
	change := w.told == c.Writable
	w.told = !c.Writable
	w.mu.Unlock()
	switch {
	case !change:
	case !c.Writable:
		s.log.Error("the database cannot be written: its disk is full or read-only; every change is refused until an administrator frees space on it or makes it writable again",
			"database", absPath(s.path), "since", c.Since, "err", c.Err)
	default:
		s.log.Info("the database can be written again", "database", absPath(s.path))
	}
	return c
}

// absPath is path made absolute, for an operator to find.
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// known is last, or writable when nothing is known yet.
func known(last WriteCheck) WriteCheck {
	if last.At.IsZero() {
		return WriteCheck{Writable: true}
	}
	return last
}
