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
// workbenches, notifications; first page and a later one): each reads
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
			return workbenchesAfterQuery(tx, 7, WorkbenchKey{}, 101).Find(&[]Workbench{})
		}},
		{"WorkbenchesAfter(owner, later)", "workbenches_owner_created", true, func(tx *gorm.DB) *gorm.DB {
			return workbenchesAfterQuery(tx, 7, key, 101).Find(&[]Workbench{})
		}},
		{"WorkbenchesAfter(all, first)", "workbenches_created", false, func(tx *gorm.DB) *gorm.DB {
			return workbenchesAfterQuery(tx, 0, WorkbenchKey{}, 101).Find(&[]Workbench{})
		}},
		{"WorkbenchesAfter(all, later)", "workbenches_created", true, func(tx *gorm.DB) *gorm.DB {
			return workbenchesAfterQuery(tx, 0, key, 101).Find(&[]Workbench{})
		}},
		{"NotificationsBefore(first)", "notifications_user", true, func(tx *gorm.DB) *gorm.DB {
			return notificationsBeforeQuery(tx, 7, 0, 101).Find(&[]Notification{})
		}},
		{"NotificationsBefore(later)", "notifications_user", true, func(tx *gorm.DB) *gorm.DB {
			return notificationsBeforeQuery(tx, 7, 900, 101).Find(&[]Notification{})
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
			// The list's own table (the first step): searched where the
			// page has a bound, else walked in order from its start.
			first := plan[0]
			if tc.later && !strings.HasPrefix(first, "SEARCH ") {
				t.Errorf("a later page walks the rows before it:\n  %s\nplan: %q", sql, plan)
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
			wbs, err := s.WorkbenchesAfter(ctx, owner, key, 2)
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
