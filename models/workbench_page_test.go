package models

import (
	"context"
	"testing"
)

// TestWorkbenchPageFiltersAndPages: the admin workbenches page reads one
// page of everyone's workbenches, newest first with their owners' names,
// optionally in one state or matching a search, and counts all that match.
func TestWorkbenchPageFiltersAndPages(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	if err := s.SeedCatalog(ctx, nil); err != nil {
		t.Fatal(err)
	}
	alice, _ := s.CreateUser(ctx, NewUser{Username: "alice", Password: "alice-password-1"})
	bob, _ := s.CreateUser(ctx, NewUser{Username: "bob", Password: "bob-password-1"})
	img, _ := s.ListImages(ctx, false)
	fl, _ := s.ListFlavors(ctx, false)
	var ids []string // oldest first
	for i, owner := range []*User{alice, bob, alice, bob, alice} {
		wb := &Workbench{Name: "wb" + string(rune('a'+i)), OwnerID: owner.ID, ImageID: img[0].ID, FlavorID: fl[0].ID}
		if err := s.CreateWorkbench(ctx, wb, GPUNeed{}, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, wb.ID)
	}
	for _, id := range []string{ids[1], ids[3]} {
		if err := s.SetWorkbenchState(ctx, id, StateStopped, 0, "", nil); err != nil {
			t.Fatal(err)
		}
	}

	first, total, err := s.WorkbenchPage(ctx, WorkbenchFilter{}, 0, 3)
	if err != nil || total != 5 || len(first) != 3 {
		t.Fatalf("page 1: %d rows, total %d, err %v; want 3 of 5", len(first), total, err)
	}
	if first[0].ID != ids[4] || first[2].ID != ids[2] {
		t.Errorf("page 1 is not newest first: %s, %s, %s", first[0].Name, first[1].Name, first[2].Name)
	}
	if first[1].OwnerName != "bob" || first[0].OwnerName != "alice" {
		t.Errorf("owner names: %q, %q", first[0].OwnerName, first[1].OwnerName)
	}
	second, total, err := s.WorkbenchPage(ctx, WorkbenchFilter{}, 3, 3)
	if err != nil || total != 5 || len(second) != 2 || second[0].ID != ids[1] || second[1].ID != ids[0] {
		t.Fatalf("page 2: %d rows, total %d, err %v; want the two oldest", len(second), total, err)
	}
	stopped, total, err := s.WorkbenchPage(ctx, WorkbenchFilter{State: StateStopped}, 0, 100)
	if err != nil || total != 2 || len(stopped) != 2 {
		t.Fatalf("stopped: %d rows, total %d, err %v; want 2", len(stopped), total, err)
	}
	for _, wb := range stopped {
		if wb.State != StateStopped {
			t.Errorf("%s is %s in the stopped filter", wb.Name, wb.State)
		}
	}
	// A search finds a name or an owner, any case, "%" and "_" as
	// themselves; with a state, both must hold.
	for search, want := range map[string]int{"BOB": 2, "wbc": 1, "wb": 5, "%": 0, "_": 0, "ali": 3} {
		got, total, err := s.WorkbenchPage(ctx, WorkbenchFilter{Search: search}, 0, 100)
		if err != nil || total != int64(want) || len(got) != want {
			t.Errorf("search %q: %d rows, total %d, err %v; want %d", search, len(got), total, err, want)
		}
	}
	if got, total, err := s.WorkbenchPage(ctx, WorkbenchFilter{State: StateStopped, Search: "bob"}, 0, 100); err != nil || total != 2 || len(got) != 2 {
		t.Errorf("bob's stopped: %d rows, total %d, err %v; want 2", len(got), total, err)
	}
	if got, total, err := s.WorkbenchPage(ctx, WorkbenchFilter{State: StateStopped, Search: "alice"}, 0, 100); err != nil || total != 0 || len(got) != 0 {
		t.Errorf("alice's stopped: %d rows, total %d, err %v; want 0", len(got), total, err)
	}
	// A group's members' (a class): bob's, in any state, with the search.
	g, err := s.CreateGroup(ctx, "ml101", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddGroupMember(ctx, g.ID, bob.ID); err != nil {
		t.Fatal(err)
	}
	if got, total, err := s.WorkbenchPage(ctx, WorkbenchFilter{GroupID: g.ID}, 0, 100); err != nil || total != 2 || len(got) != 2 || got[0].OwnerID != bob.ID || got[1].OwnerID != bob.ID {
		t.Errorf("ml101's: %d rows, total %d, err %v; want bob's 2", len(got), total, err)
	}
	if got, total, err := s.WorkbenchPage(ctx, WorkbenchFilter{GroupID: g.ID, Search: "wbd"}, 0, 100); err != nil || total != 1 || len(got) != 1 || got[0].ID != ids[3] {
		t.Errorf("ml101's wbd: %d rows, total %d, err %v; want 1", len(got), total, err)
	}
}
