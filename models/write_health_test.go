package models

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// WriteState tells whether the database can be written: a refused write
// says so at once, and a probe (one small write) finds out at most every
// WriteProbeEvery, never once per question.
func TestWriteState(t *testing.T) {
	ctx := context.Background()
	var logs bytes.Buffer // WriteState's callers are serial here
	s, err := Open(ctx, t.TempDir(), slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	t0 := time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC)
	var offset atomic.Int64
	s.SetClock(func() time.Time { return t0.Add(time.Duration(offset.Load())) })
	at := func(d time.Duration) { offset.Store(int64(d)) }
	probe := func() string {
		t.Helper()
		v, err := s.Setting(ctx, writeProbeKey)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	if w := s.WriteState(ctx); !w.Writable || !w.At.Equal(t0) {
		t.Fatalf("a writable database: %+v", w)
	}
	first := probe()
	if first == "" {
		t.Fatal("the first question made no probe")
	}
	at(10 * time.Second)
	if w := s.WriteState(ctx); !w.Writable {
		t.Fatalf("asked again: %+v", w)
	}
	if probe() != first {
		t.Fatal("a second question within the interval wrote again")
	}

	// A write refused (a read-only disk) is news at once: no probe needed.
	if err := s.QueryOnly(ctx, true); err != nil {
		t.Fatal(err)
	}
	at(15 * time.Second)
	if err := s.SetSetting(ctx, "x", "y"); !Unwritable(err) {
		t.Fatalf("a write to a read-only database: %v", err)
	}
	w := s.WriteState(ctx)
	if w.Writable || !Unwritable(w.Err) || !w.Since.Equal(t0.Add(15*time.Second)) {
		t.Fatalf("after a refused write: %+v; want not writable since the write", w)
	}
	// A failed transaction (InTx: its begin or commit, which no
	// statement's watch sees) is seen as well, and keeps the first
	// failure's time.
	at(20 * time.Second)
	if err := s.InTx(ctx, func(tx *Store) error { return tx.SetSetting(ctx, "x", "y") }); !Unwritable(err) {
		t.Fatalf("a transaction on a read-only database: %v", err)
	}
	if w := s.WriteState(ctx); w.Writable || !w.At.Equal(t0.Add(20*time.Second)) || !w.Since.Equal(t0.Add(15*time.Second)) {
		t.Fatalf("after a refused transaction: %+v", w)
	}

	// Writable again: told by the next probe, once the last news is old.
	if err := s.QueryOnly(ctx, false); err != nil {
		t.Fatal(err)
	}
	at(40 * time.Second)
	if w := s.WriteState(ctx); w.Writable {
		t.Fatalf("within the interval of the refused write: %+v; want the refusal until the next probe", w)
	}
	at(20*time.Second + WriteProbeEvery)
	if w := s.WriteState(ctx); !w.Writable {
		t.Fatalf("writable again, after the interval: %+v", w)
	}

	// Nobody wrote: the probe finds out.
	if err := s.QueryOnly(ctx, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.QueryOnly(context.Background(), false) })
	at(21*time.Second + 2*WriteProbeEvery)
	if w := s.WriteState(ctx); w.Writable || !Unwritable(w.Err) {
		t.Fatalf("a read-only database nobody wrote to: %+v", w)
	}

	// The log told each change once, naming the database.
	out := logs.String()
	if n := strings.Count(out, "level=ERROR msg=\"the database cannot be written"); n != 2 {
		t.Errorf("%d errors for two spells of refused writes, want 2:\n%s", n, out)
	}
	if n := strings.Count(out, "can be written again"); n != 1 || !strings.Contains(out, "database="+absPath(s.Path())) {
		t.Errorf("%d infos for one recovery, want 1, naming the database:\n%s", n, out)
	}
}
