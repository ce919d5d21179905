package models

import (
	"context"
	"slices"
	"testing"
)

// A saved image shared with a group follows the group's rename, and is no
// longer shared once the group is deleted: a new group given the old name
// saw images shared with the old one, whose members lost them.
func TestSharedImageFollowsGroupRenameAndDelete(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	owner, err := s.CreateUser(ctx, NewUser{Username: "mallory", Password: "mallory-password", Role: "user"})
	if err != nil {
		t.Fatal(err)
	}
	ml, err := s.CreateGroup(ctx, "ml", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateGroup(ctx, "vision", ""); err != nil {
		t.Fatal(err)
	}
	img := &Image{Name: "snap (mallory)", Image: "workbench-saved/x/u1-snap:v1", RunAsUser: "1000", HomePath: "/home/jovyan",
		StartCommand: "jupyter lab --port={port} --ServerApp.base_url={base_url} --IdentityProvider.token={token}", Enabled: true, OwnerID: owner.ID}
	if err := s.CreateImage(ctx, img); err != nil {
		t.Fatal(err)
	}
	if err := s.ShareImage(ctx, img.ID, []string{"ml", "vision"}); err != nil {
		t.Fatal(err)
	}
	shared := func() []string {
		got, err := s.ImageByID(ctx, img.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.SharedGroups
	}
	if err := s.RenameGroup(ctx, ml.ID, "ml-2025"); err != nil {
		t.Fatal(err)
	}
	if got := shared(); !slices.Equal(got, []string{"ml-2025", "vision"}) {
		t.Fatalf("after the rename shared with %v, want [ml-2025 vision]", got)
	}
	// A new group under the old name does not inherit the share.
	if _, err := s.CreateGroup(ctx, "ml", ""); err != nil {
		t.Fatal(err)
	}
	got, _ := s.ImageByID(ctx, img.ID)
	if got.VisibleTo(999, []string{"ml"}) {
		t.Fatal("a member of the new ml sees the image shared with the old one")
	}
	if _, err := s.DeleteGroup(ctx, ml.ID); err != nil {
		t.Fatal(err)
	}
	if got := shared(); !slices.Equal(got, []string{"vision"}) {
		t.Fatalf("after the delete shared with %v, want [vision]", got)
	}
}
