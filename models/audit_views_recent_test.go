package models

import (
	"context"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"
)

// AuditsOn lists one target's rows of one action from a time on, newest
// first by time (a row written later under a clock set back sorts by its
// time), at most limit, with the count of all in the window; rows before
// the window, of another action or on another target are neither listed
// nor counted.
func TestAuditsOnListsTheWindowNewestFirst(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	base := time.Date(2030, 3, 10, 9, 0, 0, 0, time.UTC)
	write := func(at time.Time, actor, action, target string) {
		t.Helper()
		s.SetClock(func() time.Time { return at })
		if err := s.WriteAudit(ctx, AuditRecord{Actor: actor, Action: action, Target: target}); err != nil {
			t.Fatal(err)
		}
	}
	write(base.AddDate(0, 0, -91), "old", ActionViewAsAdmin, "wb-1") // before the window
	for i := range 6 {
		write(base.Add(time.Duration(i)*time.Hour), []string{"root", "alice"}[i%2], ActionViewAsAdmin, "wb-1")
	}
	write(base.Add(90*time.Minute), "late", ActionViewAsAdmin, "wb-1") // written last, between 1 h and 2 h
	write(base.Add(10*time.Hour), "root", "workbench.stop", "wb-1")
	write(base.Add(10*time.Hour), "root", ActionViewAsAdmin, "wb-2")

	rows, total, err := s.AuditsOn(ctx, ActionViewAsAdmin, "wb-1", base.AddDate(0, 0, -90), 5)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows {
		got = append(got, r.Actor+"@"+r.At.Sub(base).String())
	}
	want := "alice@5h0m0s root@4h0m0s alice@3h0m0s root@2h0m0s late@1h30m0s"
	if strings.Join(got, " ") != want || total != 7 {
		t.Errorf("got %q, %d in all; want %q, 7 in all", got, total, want)
	}
	if rows, total, err := s.AuditsOn(ctx, ActionViewAsAdmin, "wb-3", base, 5); err != nil || len(rows) != 0 || total != 0 {
		t.Errorf("a workbench nobody viewed: %+v, %d, %v", rows, total, err)
	}
}

// TestAuditsOnReadsAnIndexRange EXPLAINs AuditsOn's statement as
// TestListPagesReadAnIndexRange does the API's pages: the rows and their
// count are each a search of audit_log_target_action_at bounded by the
// target, the action and the window's start, in the list's order (no
// sort of the workbench's rows), and the count reads the index alone.
func TestAuditsOnReadsAnIndexRange(t *testing.T) {
	s, _ := newTestStore(t)
	since := time.Date(2030, 3, 10, 9, 0, 0, 0, time.UTC)
	sql := s.db.ToSQL(func(tx *gorm.DB) *gorm.DB {
		return auditsOnQuery(tx, ActionViewAsAdmin, "wb-a", since, 5).Scan(&[]auditWithTotal{})
	})
	plan := explainCaptured(t, s, capturedQuery{sql: sql})
	joined := strings.Join(plan, "\n")
	if !strings.Contains(sql, "LIMIT 5") {
		t.Errorf("no LIMIT: %s", sql)
	}
	if strings.Contains(joined, "TEMP B-TREE") {
		t.Errorf("sorts the workbench's rows:\n  %s\nplan: %q", sql, plan)
	}
	searches := 0
	for _, step := range plan {
		if strings.HasPrefix(step, "SCAN ") {
			t.Errorf("full scan:\n  %s\nplan: %q", sql, plan)
		}
		if strings.HasPrefix(step, "SEARCH ") {
			searches++
			if !strings.Contains(step, "audit_log_target_action_at (target=? AND action=? AND at>?)") {
				t.Errorf("not a range of the window in audit_log_target_action_at: %q\n  %s", step, sql)
			}
		}
	}
	if searches != 2 || !strings.Contains(joined, "COVERING INDEX audit_log_target_action_at") {
		t.Errorf("want the rows and a count off the index alone, each a search:\n  %s\nplan: %q", sql, plan)
	}
	t.Logf("%q", plan)
}
