package models

import (
	"context"
	"errors"
	"testing"
)

// Deleting a group takes what was set for it — quota, booking cap,
// default priority class — and its memberships, and nothing of another
// group; its members stay.
func TestDeleteGroupTakesWhatWasSetForIt(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	u, _ := s.CreateUser(ctx, NewUser{Username: "ida", Password: "ida-password-1"})
	classes, err := s.PriorityClasses(ctx)
	if err != nil || len(classes) == 0 {
		t.Fatalf("priority classes: %v %v", classes, err)
	}
	hours, gpus := int64(10), int64(1)
	var ids []int64
	for _, name := range []string{"gone", "kept"} {
		g, err := s.CreateGroup(ctx, name, "")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, g.ID)
		if err := s.AddGroupMember(ctx, g.ID, u.ID); err != nil {
			t.Fatal(err)
		}
		if err := s.SetQuota(ctx, ScopeGroup, g.ID, Limits{MaxGPUs: &gpus}, "admin"); err != nil {
			t.Fatal(err)
		}
		if err := s.SetReservationCap(ctx, ScopeGroup, g.ID, &hours, "admin"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.SetPriorityDefault(ctx, PriorityScopeGroup, g.ID, classes[0].Name); err != nil {
			t.Fatal(err)
		}
	}
	g, err := s.DeleteGroup(ctx, ids[0])
	if err != nil || g.Name != "gone" || len(g.Members) != 1 || g.Members[0] != "ida" {
		t.Fatalf("delete: %+v %v", g, err)
	}
	count := func(table, where string, id int64) int64 {
		var n int64
		if err := s.db.Table(table).Where(where, id).Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, id := range ids {
		want := int64(1)
		if id == ids[0] {
			want = 0
		}
		for _, c := range []struct{ table, where string }{
			{"quotas", "scope = 'group' AND subject_id = ?"},
			{"reservation_caps", "scope = 'group' AND subject_id = ?"},
			{"priority_defaults", "scope = 'group' AND ref_id = ?"},
			{"group_members", "group_id = ?"},
			{"groups", "id = ?"},
		} {
			if n := count(c.table, c.where, id); n != want {
				t.Errorf("group %d: %d rows in %s, want %d", id, n, c.table, want)
			}
		}
	}
	if _, err := s.UserByID(ctx, u.ID); err != nil {
		t.Fatalf("the member went with the group: %v", err)
	}
	if _, err := s.DeleteGroup(ctx, ids[0]); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleting it again: %v, want ErrNotFound", err)
	}
}
