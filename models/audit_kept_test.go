package models

import (
	"context"
	"testing"
	"time"
)

// Rows kept while the database cannot be written are bounded: the first
// KeptAuditMax are kept and written with their own times once it can be;
// the rest are counted and told by one audit.rows_lost row, so the log
// says that something is missing, and from when to when.
func TestKeptAuditRowsAreBounded(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	at := t0
	s.SetClock(func() time.Time { return at })
	if err := s.QueryOnly(ctx, true); err != nil {
		t.Fatal(err)
	}
	for i := range KeptAuditMax + 3 {
		at = t0.Add(time.Duration(i) * time.Second)
		if err := s.AuditHappened(ctx, AuditRecord{Actor: "alice", Action: "session.login", Target: "alice"}); !Unwritable(err) {
			t.Fatalf("row %d: %v, want the database's refusal", i, err)
		}
	}
	if n := s.KeptAudit(); n != KeptAuditMax {
		t.Fatalf("kept %d rows, want the bound %d", n, KeptAuditMax)
	}
	if err := s.FlushKeptAudit(ctx); !Unwritable(err) {
		t.Fatalf("flush while unwritable: %v", err)
	}
	if err := s.QueryOnly(ctx, false); err != nil {
		t.Fatal(err)
	}
	at = t0.Add(time.Hour)
	if err := s.FlushKeptAudit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := s.KeptAudit(); n != 0 {
		t.Errorf("%d rows still kept after a flush", n)
	}
	rows, err := s.ListAudit(ctx, KeptAuditMax+10)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != KeptAuditMax+1 {
		t.Fatalf("%d rows written, want %d kept and one audit.rows_lost", len(rows), KeptAuditMax+1)
	}
	lost, first := rows[0], rows[len(rows)-1]
	if lost.Action != "audit.rows_lost" || lost.After == "" || !first.At.Equal(t0) || first.Action != "session.login" {
		t.Errorf("newest %+v, oldest %+v; want audit.rows_lost last and the first sign-in at %s", lost, first, t0)
	}
	// Nothing kept: a flush writes nothing.
	if err := s.FlushKeptAudit(ctx); err != nil {
		t.Fatal(err)
	}
	if again, _ := s.ListAudit(ctx, KeptAuditMax+10); len(again) != len(rows) {
		t.Errorf("a second flush wrote %d more rows", len(again)-len(rows))
	}
}
