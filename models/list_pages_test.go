package models

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"
)

// TestListPagesReadAnIndexRange EXPLAINs the API's keyset pages (users,
// workbenches, notifications, a month's ledger lines; first page and a
// later one): each reads
// limit rows off an index already in the list's order — no sort of every
// row first (a temporary B-tree), and a later page starts by a search, not
// by walking the rows before it.
func TestListPagesReadAnIndexRange(t *testing.T) {
	s, _ := newTestStore(t)
	key := WorkbenchKey{CreatedAt: time.Date(2030, 3, 10, 10, 0, 0, 0, time.UTC), ID: "wb-x"}
	cases := []struct {
		name, index string
		later       bool
		build       func(tx *gorm.DB) *gorm.DB
	}{
		{"UsersAfter(first)", "PRIMARY KEY", false, func(tx *gorm.DB) *gorm.DB { return usersAfterQuery(tx, 0, 101).Find(&[]User{}) }},
		{"UsersAfter(later)", "PRIMARY KEY", true, func(tx *gorm.DB) *gorm.DB { return usersAfterQuery(tx, 500, 101).Find(&[]User{}) }},
		{"WorkbenchesAfter(owner, first)", "workbenches_owner_created", true, func(tx *gorm.DB) *gorm.DB {
			return workbenchesAfterQuery(tx, 7, 0, WorkbenchKey{}, 101).Find(&[]Workbench{})
		}},
		{"WorkbenchesAfter(owner, later)", "workbenches_owner_created", true, func(tx *gorm.DB) *gorm.DB {
			return workbenchesAfterQuery(tx, 7, 0, key, 101).Find(&[]Workbench{})
		}},
		{"WorkbenchesAfter(all, first)", "workbenches_created", false, func(tx *gorm.DB) *gorm.DB {
			return workbenchesAfterQuery(tx, 0, 0, WorkbenchKey{}, 101).Find(&[]Workbench{})
		}},
		{"WorkbenchesAfter(all, later)", "workbenches_created", true, func(tx *gorm.DB) *gorm.DB {
			return workbenchesAfterQuery(tx, 0, 0, key, 101).Find(&[]Workbench{})
		}},
		{"NotificationsBefore(first)", "notifications_user", true, func(tx *gorm.DB) *gorm.DB {
			return notificationsBeforeQuery(tx, 7, 0, 101).Find(&[]Notification{})
		}},
		{"NotificationsBefore(later)", "notifications_user", true, func(tx *gorm.DB) *gorm.DB {
			return notificationsBeforeQuery(tx, 7, 900, 101).Find(&[]Notification{})
		}},
		{"StatementLinesAfter(user, first)", "ledger_user_month", true, func(tx *gorm.DB) *gorm.DB {
			return statementLinesAfterQuery(tx, 7, key.CreatedAt, 0, 101).Scan(&[]StatementLine{})
		}},
		{"StatementLinesAfter(user, later)", "ledger_user_month", true, func(tx *gorm.DB) *gorm.DB {
			return statementLinesAfterQuery(tx, 7, key.CreatedAt, 900, 101).Scan(&[]StatementLine{})
		}},
		{"StatementLinesAfter(all, first)", "ledger_month", true, func(tx *gorm.DB) *gorm.DB {
			return statementLinesAfterQuery(tx, 0, key.CreatedAt, 0, 101).Scan(&[]StatementLine{})
		}},
		{"StatementLinesAfter(all, later)", "ledger_month", true, func(tx *gorm.DB) *gorm.DB {
			return statementLinesAfterQuery(tx, 0, key.CreatedAt, 900, 101).Scan(&[]StatementLine{})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sql := s.db.ToSQL(tc.build)
			plan := explainCaptured(t, s, capturedQuery{sql: sql})
			joined := strings.Join(plan, "\n")
			if !strings.Contains(sql, "LIMIT 101") {
				t.Errorf("no LIMIT: %s", sql)
			}
			if strings.Contains(joined, "TEMP B-TREE") {
				t.Errorf("sorts every row before the page:\n  %s\nplan: %q", sql, plan)
			}
			if !strings.Contains(joined, tc.index) {
				t.Errorf("not read through %s:\n  %s\nplan: %q", tc.index, sql, plan)
			}
			// The list's own table (the step through its index; a user's
			// ledger lines look the one user up first): searched where the
			// page has a bound, else walked in order from its start; a
			// later page's search starts at its cursor.
			var own string
			for _, step := range plan {
				if strings.Contains(step+" ", tc.index+" ") {
					own = step
					break
				}
			}
			if tc.later && !strings.HasPrefix(own, "SEARCH ") {
				t.Errorf("a later page walks the rows before it:\n  %s\nplan: %q", sql, plan)
			}
			if strings.Contains(tc.name, "later") && !strings.ContainsAny(own, "<>") {
				t.Errorf("a later page does not start its search at the cursor:\n  %s\nplan: %q", sql, plan)
			}
			// A ledger line's tier comes from its usage interval, found
			// by its primary key.
			if strings.HasPrefix(tc.name, "StatementLinesAfter") && !hasStep(plan, "SEARCH iv USING INTEGER PRIMARY KEY (rowid=?)") {
				t.Errorf("does not read each line's interval by its key:\n  %s\nplan: %q", sql, plan)
			}
			for _, step := range plan {
				if strings.HasPrefix(step, "SCAN ") && !strings.Contains(step, "USING") {
					t.Errorf("full scan:\n  %s\nplan: %q", sql, plan)
				}
			}
			t.Logf("%s: %q", tc.name, plan)
		})
	}
}

// TestGroupWorkbenchPagesSearchTheGroup EXPLAINs a class's workbenches
// (?group= on the admin page and on GET /api/v1/workbenches?all=true):
// nothing is scanned. The group's members are searched by group_members'
// key and their workbenches by owner (a later page from its cursor), or,
// with a state, that state's workbenches each checked by the key; only
// those rows are sorted. A class of 20 among a lab's thousands of
// workbenches reads the class's, not everyone's walked in order until a
// page of the class is found.
func TestGroupWorkbenchPagesSearchTheGroup(t *testing.T) {
	s, _ := newTestStore(t)
	key := WorkbenchKey{CreatedAt: time.Date(2030, 3, 10, 10, 0, 0, 0, time.UTC), ID: "wb-x"}
	var rows []Workbench
	var total int64
	for name, build := range map[string]func(tx *gorm.DB) *gorm.DB{
		"WorkbenchesAfter(first)": func(tx *gorm.DB) *gorm.DB { return workbenchesAfterQuery(tx, 0, 3, WorkbenchKey{}, 101).Find(&rows) },
		"WorkbenchesAfter(later)": func(tx *gorm.DB) *gorm.DB { return workbenchesAfterQuery(tx, 0, 3, key, 101).Find(&rows) },
		"WorkbenchPage": func(tx *gorm.DB) *gorm.DB {
			return inGroup(listWorkbenchesQuery(tx, 0, []string{StateRunning}), 3).Offset(100).Limit(100).Find(&rows)
		},
		"WorkbenchPage(count)": func(tx *gorm.DB) *gorm.DB {
			return inGroup(listWorkbenchesQuery(tx, 0, nil), 3).Count(&total)
		},
	} {
		t.Run(name, func(t *testing.T) {
			sql := s.db.ToSQL(build)
			plan := explainCaptured(t, s, capturedQuery{sql: sql})
			joined := strings.Join(plan, "\n")
			if !strings.Contains(joined, "SEARCH group_members USING COVERING INDEX sqlite_autoindex_group_members_1 (group_id=?") {
				t.Errorf("the group's members are not searched by group_members' key:\n  %s\nplan: %q", sql, plan)
			}
			if strings.Contains(name, "later") && !strings.Contains(joined, "(created_at,id)<(?,?)") {
				t.Errorf("a later page does not start at its cursor:\n  %s\nplan: %q", sql, plan)
			}
			for _, step := range plan {
				if strings.HasPrefix(step, "SCAN ") {
					t.Errorf("a scan, not a search by the group or the state:\n  %s\nplan: %q", sql, plan)
				}
			}
			t.Logf("%s: %q", name, plan)
		})
	}
}

// TestWorkbenchesAfterWalksTies: workbenches created in the same instant
// (a pinned clock) page by id within it, so walking two at a time returns
// ListWorkbenches' order exactly; one made during the walk (newer: before
// the cursor) and one deleted ahead of it shift nothing else.
func TestWorkbenchesAfterWalksTies(t *testing.T) {
	f := newMoneyFixture(t)
	s, ctx := f.s, context.Background()
	at := time.Date(2030, 3, 10, 9, 0, 0, 0, time.UTC)
	s.SetClock(func() time.Time { return at })
	for i := range 7 {
		if i == 5 {
			at = at.Add(time.Second)
		}
		wb := &Workbench{Name: fmt.Sprintf("tie%d", i), OwnerID: f.user.ID, ImageID: f.wb.ImageID, FlavorID: f.wb.FlavorID, Token: "t"}
		if err := s.CreateWorkbench(ctx, wb, GPUNeed{}, nil); err != nil {
			t.Fatal(err)
		}
	}
	whole, err := s.ListWorkbenches(ctx, f.user.ID)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, wb := range whole {
		want = append(want, wb.ID)
	}
	for _, owner := range []int64{f.user.ID, 0} {
		var got []string
		var key WorkbenchKey
		for page := 0; ; page++ {
			wbs, err := s.WorkbenchesAfter(ctx, owner, 0, key, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(wbs) == 0 {
				break
			}
			for _, wb := range wbs {
				got = append(got, wb.ID)
			}
			key = wbs[len(wbs)-1].Key()
			if page == 1 {
				at = at.Add(time.Minute) // newest of all: on page 1, already read
				if err := s.CreateWorkbench(ctx, &Workbench{Name: fmt.Sprintf("new%d", owner), OwnerID: f.user.ID, ImageID: f.wb.ImageID, FlavorID: f.wb.FlavorID, Token: "t"}, GPUNeed{}, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("owner %d: walked\n  %v\nwant\n  %v", owner, got, want)
		}
		// The next walk sees the new ones first.
		if whole, err = s.ListWorkbenches(ctx, f.user.ID); err != nil {
			t.Fatal(err)
		}
		want = want[:0]
		for _, wb := range whole {
			want = append(want, wb.ID)
		}
	}
}

// TestStatementLinesAfterWalksTies: a month's ledger lines page by id, two
// at a time: the GPU, CPU and memory lines of one hour (a tie of period)
// each once, the lines of the months around it and another user's never,
// one of an earlier hour written after later ones where its id puts it.
// Lines written during the walk (a reversal dated back into the month, the
// next hour billed) come on its last pages; the walk adds up to the
// month's total, and a line reversed meanwhile names its reversal.
func TestStatementLinesAfterWalksTies(t *testing.T) {
	f := newMoneyFixture(t)
	s, ctx := f.s, context.Background()
	bob, err := s.CreateUser(ctx, NewUser{Username: "bob", Password: "correct-horse-2"})
	if err != nil {
		t.Fatal(err)
	}
	s.SetClock(func() time.Time { return time.Date(2030, 3, 20, 12, 0, 0, 0, time.UTC) })
	march := time.Date(2030, 3, 1, 0, 0, 0, 0, time.UTC)
	hour := func(userID int64, h time.Time, tag string) []LedgerEntry {
		var out []LedgerEntry
		for i, res := range []string{"gpu", "cpu", "memory"} {
			l := f.line(h, int64(1_000_000*(i+1)))
			l.IdempotencyKey = fmt.Sprintf("test:%s:%d:%s:%d", tag, userID, res, h.Unix())
			l.UserID, l.Resource = userID, res
			if userID != f.user.ID {
				l.WorkbenchID, l.IntervalID = "", nil
			}
			out = append(out, l)
		}
		return out
	}
	bill := func(lines []LedgerEntry) {
		t.Helper()
		if _, err := s.RecordBilling(ctx, 0, lines, march, false); err != nil {
			t.Fatal(err)
		}
	}
	bill(hour(f.user.ID, march.Add(-time.Hour), "feb")) // February's last hour
	for h := 10; h < 14; h++ {
		bill(hour(f.user.ID, march.Add(time.Duration(h)*time.Hour), "mar"))
		bill(hour(bob.ID, march.Add(time.Duration(h)*time.Hour), "mar"))
	}
	bill(hour(f.user.ID, march.Add(2*time.Hour), "late"))                              // an earlier hour, billed after
	bill(hour(f.user.ID, march.AddDate(0, 1, 0), "apr"))                               // April's first hour
	if _, err := s.Credit(ctx, f.user.ID, 500_000, "", "outage", "root"); err != nil { // dated now: March
		t.Fatal(err)
	}
	walk := func(userID int64, during func(page int, lines []StatementLine)) ([]StatementLine, int) {
		t.Helper()
		var got []StatementLine
		var after int64
		pages := 0
		for {
			page, err := s.StatementLinesAfter(ctx, userID, march, after, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				return got, pages
			}
			pages++
			got = append(got, page...)
			after = page[len(page)-1].ID
			if during != nil {
				during(pages, page)
			}
		}
	}
	var reversed int64
	got, _ := walk(f.user.ID, func(page int, lines []StatementLine) {
		if page == 1 {
			reversed = lines[0].ID // already read: its reversal comes at the end
			if _, err := s.Reverse(ctx, reversed, "metered twice"); err != nil {
				t.Fatal(err)
			}
			bill(hour(f.user.ID, march.Add(20*time.Hour), "mar"))
		}
	})
	// What the month holds now, by id: every line the walk must have read.
	var want []int64
	var wantTotal int64
	if err := s.db.Raw(`SELECT id FROM ledger_entries WHERE user_id = ? AND period_start >= ? AND period_start < ? ORDER BY id`,
		f.user.ID, march, march.AddDate(0, 1, 0)).Scan(&want).Error; err != nil {
		t.Fatal(err)
	}
	_, wantTotal, err = s.UsageSummary(ctx, march, march.AddDate(0, 1, 0), "workbench", f.user.ID)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	var total int64
	for _, l := range got {
		ids = append(ids, l.ID)
		total += l.AmountMicros
		if l.UserID != f.user.ID || l.Username != "alice" {
			t.Errorf("line %d of user %d (%q) in alice's walk", l.ID, l.UserID, l.Username)
		}
		if ps := l.PeriodStart.UTC(); ps.Before(march) || !ps.Before(march.AddDate(0, 1, 0)) {
			t.Errorf("line %d starts %s, outside March", l.ID, ps)
		}
		if wantName := map[bool]string{true: "exp", false: ""}[l.WorkbenchID != ""]; l.WorkbenchName != wantName {
			t.Errorf("line %d (workbench %q) names its workbench %q, want %q", l.ID, l.WorkbenchID, l.WorkbenchName, wantName)
		}
	}
	// 4 hours × 3, the late hour's 3, the credit, the reversal, the hour
	// billed during the walk.
	if len(want) != 20 || !slices.Equal(ids, want) {
		t.Fatalf("alice's walk by id:\n got %v\nwant %v (20 lines)", ids, want)
	}
	if total != wantTotal {
		t.Errorf("the walk adds up to %d micros, the month's total is %d", total, wantTotal)
	}
	// Read again, the reversed line names its reversal, which names it.
	again, _ := walk(f.user.ID, nil)
	var rev int64
	for _, l := range again {
		if l.ID == reversed && l.ReversedBy != nil {
			rev = *l.ReversedBy
		}
	}
	if rev == 0 || again[len(again)-4].ID != rev || again[len(again)-4].Reverses == nil || *again[len(again)-4].Reverses != reversed {
		t.Errorf("line %d reversed during the walk: reversed_by %d; the walk's last lines %+v", reversed, rev, again[len(again)-4:])
	}
	// Everyone's: alice's and bob's March lines, by id, two a page.
	all, pages := walk(0, nil)
	var bobs int
	for i, l := range all {
		if i > 0 && l.ID <= all[i-1].ID {
			t.Fatalf("everyone's walk out of order at %d: %d after %d", i, l.ID, all[i-1].ID)
		}
		if l.UserID == bob.ID {
			bobs++
		}
	}
	if len(all) != 32 || bobs != 12 || pages != 16 {
		t.Errorf("everyone's walk: %d lines (%d of bob's) in %d pages, want 32 (12) in 16", len(all), bobs, pages)
	}
}
