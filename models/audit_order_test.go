package models

import (
	"context"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"
)

// A sign-in kept in memory while the database could not be written is
// written, with its own time, after a change made once the disk was
// fixed: it has the later id, yet the audit log (its page, each page of
// it, the page filtered by actor, ListAudit) shows it below that change,
// where its time puts it.
func TestKeptAuditRowShowsBelowLaterChanges(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	at := t0
	s.SetClock(func() time.Time { return at })
	if err := s.QueryOnly(ctx, true); err != nil {
		t.Fatal(err)
	}
	if err := s.AuditHappened(ctx, AuditRecord{Actor: "alice", Action: "session.login", Target: "alice"}); !Unwritable(err) {
		t.Fatalf("sign-in while unwritable: %v, want the database's refusal", err)
	}
	if err := s.QueryOnly(ctx, false); err != nil {
		t.Fatal(err)
	}
	at = t0.Add(5 * time.Minute) // the disk is fixed; an admin changes a price
	if err := s.Audit(ctx, "admin", "price.set", "H100", nil, map[string]int{"micros": 1}); err != nil {
		t.Fatal(err)
	}
	at = t0.Add(7 * time.Minute) // the periodic flush writes the kept sign-in
	if err := s.FlushKeptAudit(ctx); err != nil {
		t.Fatal(err)
	}

	rows, total, err := s.AuditPage(ctx, "", "", 0, 10)
	if err != nil || total != 2 || len(rows) != 2 {
		t.Fatalf("page: %d of %d rows (%v)", len(rows), total, err)
	}
	change, login := rows[0], rows[1]
	if change.Action != "price.set" || login.Action != "session.login" || !login.At.Equal(t0) {
		t.Errorf("page shows %s (%s) above %s (%s); want the later change first, the kept sign-in at %s below it",
			rows[0].Action, rows[0].At, rows[1].Action, rows[1].At, t0)
	}
	ids := map[string]int64{}
	for _, r := range rows {
		ids[r.Action] = r.ID
	}
	if ids["session.login"] < ids["price.set"] {
		t.Fatalf("the kept row has id %d, before the change's %d: the test does not show a kept row written late", ids["session.login"], ids["price.set"])
	}
	// One row a page: the same order across pages (?page=1, ?page=2).
	for i, want := range []string{"price.set", "session.login"} {
		page, _, err := s.AuditPage(ctx, "", "", i, 1)
		if err != nil || len(page) != 1 || page[0].Action != want {
			t.Errorf("page %d: %+v (%v), want %s", i+1, page, err, want)
		}
	}
	list, err := s.ListAudit(ctx, 10)
	if err != nil || len(list) != 2 || list[0].Action != "price.set" || list[1].Action != "session.login" {
		t.Errorf("ListAudit: %+v (%v), want the change first", list, err)
	}

	// One actor: a second sign-in of alice's, written at once after the
	// change, is newest; the kept one stays below it.
	at = t0.Add(6 * time.Minute)
	if err := s.AuditHappened(ctx, AuditRecord{Actor: "alice", Action: "session.login", Target: "alice"}); err != nil {
		t.Fatal(err)
	}
	mine, n, err := s.AuditPage(ctx, "session.", "alice", 0, 10)
	if err != nil || n != 2 || len(mine) != 2 || !mine[0].At.Equal(t0.Add(6*time.Minute)) || !mine[1].At.Equal(t0) {
		t.Errorf("alice's sign-ins: %+v (%d, %v), want 10:06 above 10:00", mine, n, err)
	}
}

// The audit page reads its rows in the order it shows them from an index:
// the whole log from audit_log_at (its rowid, the id, breaks ties), one
// actor's rows from audit_log_actor_at; no page sorts the log in a
// temporary b-tree to show its first 100 rows.
func TestAuditPageReadsInTimeOrder(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name, action, actor, want string
	}{
		{"all", "", "", "audit_log_at"},
		{"action prefix", "price.", "", "audit_log_at"},
		{"actor", "", "alice", "SEARCH audit_log USING INDEX audit_log_actor_at (actor=?)"},
		{"actor and action prefix", "session.", "alice", "SEARCH audit_log USING INDEX audit_log_actor_at (actor=?)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sql := s.db.WithContext(ctx).ToSQL(func(tx *gorm.DB) *gorm.DB {
				return auditPageQuery(auditFiltered(tx, tc.action, tc.actor), 100, 100).Find(&[]AuditEntry{})
			})
			plan := explainCaptured(t, s, capturedQuery{sql: sql})
			joined := strings.Join(plan, "\n")
			if strings.Contains(joined, "TEMP B-TREE") {
				t.Errorf("the page sorts the log:\n  %s\nplan: %q", sql, plan)
			}
			if !strings.Contains(joined, tc.want) {
				t.Errorf("the page does not read %s:\n  %s\nplan: %q", tc.want, sql, plan)
			}
			t.Logf("%s: %q", tc.name, plan)
		})
	}
	// The actor's count reads the index alone.
	sql := s.db.WithContext(ctx).ToSQL(func(tx *gorm.DB) *gorm.DB {
		var n int64
		return auditFiltered(tx, "", "alice").Count(&n)
	})
	if plan := explainCaptured(t, s, capturedQuery{sql: sql}); !hasStep(plan, "SEARCH audit_log USING COVERING INDEX audit_log_actor_at (actor=?)") {
		t.Errorf("an actor's rows are not counted from audit_log_actor_at:\n  %s\nplan: %q", sql, plan)
	}
}
