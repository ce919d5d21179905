package models

import (
	"context"
	"sync"
	"testing"
	"time"
)

// An administrator's view of a workbench is recorded once per
// ViewAuditEvery: the page reloading itself (every 5 s) or a second tab
// writes nothing more until the window has passed; another administrator,
// another workbench or another action is a row of its own. Two views at
// once write one row between them (the look and the insert are one
// transaction).
func TestWriteViewAuditOncePerWindow(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	s.SetClock(func() time.Time { return now })
	view := func(actor, target string) bool {
		t.Helper()
		ok, err := s.WriteViewAudit(ctx, AuditRecord{Actor: actor, Action: ActionViewAsAdmin, Target: target, After: map[string]string{"owner": "bob"}})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	count := func(target string) int {
		t.Helper()
		var n int64
		if err := s.db.Model(&AuditEntry{}).Where("action = ? AND target = ?", ActionViewAsAdmin, target).Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		return int(n)
	}
	if !view("root", "wb-1") {
		t.Fatal("the first view was not recorded")
	}
	now = now.Add(5 * time.Second)
	if view("root", "wb-1") {
		t.Error("a reload 5 s later was recorded again")
	}
	now = now.Add(ViewAuditEvery - 10*time.Second)
	if view("root", "wb-1") {
		t.Error("a view 9 min 55 s after the first was recorded again")
	}
	if !view("alice", "wb-1") || !view("root", "wb-2") {
		t.Error("another administrator's view, or another workbench, was not recorded")
	}
	now = now.Add(5 * time.Second) // ViewAuditEvery after the first
	if !view("root", "wb-1") {
		t.Error("a view ViewAuditEvery after the first was not recorded")
	}
	if got := count("wb-1"); got != 3 {
		t.Errorf("%d rows on wb-1, want 3 (root, alice, root again)", got)
	}
	last, _, err := s.AuditsOn(ctx, ActionViewAsAdmin, "wb-1", now.Add(-time.Hour), 1)
	if err != nil || len(last) != 1 || last[0].Actor != "root" || !last[0].At.Equal(now) || last[0].After != `{"owner":"bob"}` {
		t.Fatalf("last view of wb-1: %+v %v", last, err)
	}

	// Two tabs at once.
	var wg sync.WaitGroup
	wrote := make(chan bool, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := s.WriteViewAudit(ctx, AuditRecord{Actor: "root", Action: ActionViewAsAdmin, Target: "wb-4"})
			if err != nil {
				t.Error(err)
			}
			wrote <- ok
		}()
	}
	wg.Wait()
	close(wrote)
	n := 0
	for ok := range wrote {
		if ok {
			n++
		}
	}
	if got := count("wb-4"); got != 1 || n != 1 {
		t.Errorf("8 views at once wrote %d rows (%d said they wrote), want 1", got, n)
	}
	if _, err := s.WriteViewAudit(ctx, AuditRecord{Actor: "root", Action: ActionViewAsAdmin}); err == nil {
		t.Error("a view of no target was written")
	}
}
