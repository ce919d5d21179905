package models

import (
	"context"
	"testing"
	"time"
)

// A page of users' home storage and effective limits, as the admin lists
// read them in a fixed number of statements, are what StorageUsedMilliGiB
// and EffectiveQuota say of each user one at a time: a closed interval
// does not count, a user with no home is absent, and a limit comes from
// the user, else their most generous group, else the default.
func TestStorageAndQuotasOfAPage(t *testing.T) {
	f := newMoneyFixture(t)
	ctx := context.Background()
	s := f.s
	bob, err := s.CreateUser(ctx, NewUser{Username: "bob", Password: "correct-horse-1"})
	if err != nil {
		t.Fatal(err)
	}
	carol, err := s.CreateUser(ctx, NewUser{Username: "carol", Password: "correct-horse-1"})
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	ml, _ := s.CreateGroup(ctx, "ml", "")
	must(s.AddGroupMember(ctx, ml.ID, bob.ID))
	must(s.SetQuota(ctx, ScopeDefault, 0, Limits{MaxStorageGiB: i64(10)}, "admin"))
	must(s.SetQuota(ctx, ScopeGroup, ml.ID, Limits{MaxStorageGiB: i64(50), MaxGPUs: i64(2)}, "admin"))
	must(s.SetQuota(ctx, ScopeUser, carol.ID, Limits{MaxStorageGiB: i64(1)}, "admin"))
	at := time.Date(2030, 3, 10, 10, 0, 0, 0, time.UTC)
	must(s.RecordVolume(ctx, f.user.ID, "wb-home-x-alice", 9_000, at, time.Time{}, 97))
	must(s.RecordVolume(ctx, carol.ID, "wb-home-x-carol", 2_000, at, time.Time{}, 97))
	// Carol's home grew: the old size's interval closed, the new one counts.
	must(s.RecordVolume(ctx, carol.ID, "wb-home-x-carol", 3_000, at.Add(time.Hour), time.Time{}, 97))

	ids := []int64{f.user.ID, bob.ID, carol.ID}
	used, err := s.StorageUsedOf(ctx, ids)
	must(err)
	lims, err := s.EffectiveQuotasOf(ctx, ids)
	must(err)
	if _, ok := used[bob.ID]; ok {
		t.Errorf("bob has no home, yet reads %d", used[bob.ID])
	}
	for _, id := range ids {
		one, err := s.StorageUsedMilliGiB(ctx, id)
		must(err)
		if used[id] != one {
			t.Errorf("user %d: the page reads %d milli-GiB, alone %d", id, used[id], one)
		}
		eff, err := s.EffectiveQuota(ctx, id)
		must(err)
		if got := lims[id]; got.Version() != eff.Version() || *got.MaxStorageGiB != *eff.MaxStorageGiB {
			t.Errorf("user %d: the page's limits %+v, alone %+v", id, got, eff)
		}
	}
	if used[carol.ID] != 3_000 || !StorageOver(lims[carol.ID], used[carol.ID]) || StorageOver(lims[f.user.ID], used[f.user.ID]) {
		t.Errorf("carol %d over %v, alice over %v", used[carol.ID], StorageOver(lims[carol.ID], used[carol.ID]), StorageOver(lims[f.user.ID], used[f.user.ID]))
	}
	if empty, err := s.StorageUsedOf(ctx, nil); err != nil || len(empty) != 0 {
		t.Errorf("no users: %v %v", empty, err)
	}
}
