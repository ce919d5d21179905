package models

import (
	"context"
	"slices"
	"testing"
)

// TestRenameKeepsQuotaAllowLists: quotas list allowed images and flavors
// by name; renaming one in the catalog renames it in every list, so the
// groups whose quota allows it keep it. Other names and unrestricted
// quotas are left as they were.
func TestRenameKeepsQuotaAllowLists(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	img := validImage()
	img.Name = "PyTorch (CUDA 12)"
	if err := s.CreateImage(ctx, &img); err != nil {
		t.Fatal(err)
	}
	fl := &Flavor{Name: "CPU small", CPUMilli: 2000, MemoryMiB: 8192, Enabled: true}
	if err := s.CreateFlavor(ctx, fl); err != nil {
		t.Fatal(err)
	}
	g, err := s.CreateGroup(ctx, "ml-team", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetQuota(ctx, ScopeGroup, g.ID, Limits{AllowedImages: []string{"PyTorch (CUDA 12)", "Other"}, AllowedFlavors: []string{"CPU small"}}, "root"); err != nil {
		t.Fatal(err)
	}
	one := int64(1)
	if err := s.SetQuota(ctx, ScopeDefault, 0, Limits{MaxGPUs: &one}, "root"); err != nil {
		t.Fatal(err)
	}

	img.Name = "PyTorch CUDA 12 (2026)"
	if err := s.UpdateImage(ctx, &img); err != nil {
		t.Fatal(err)
	}
	fl.Name = "CPU S"
	if err := s.UpdateFlavor(ctx, fl); err != nil {
		t.Fatal(err)
	}
	q, _, err := s.Quota(ctx, ScopeGroup, g.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(q.AllowedImages, []string{"PyTorch CUDA 12 (2026)", "Other"}) || !slices.Equal(q.AllowedFlavors, []string{"CPU S"}) {
		t.Errorf("after the renames the group allows images %q, flavors %q", q.AllowedImages, q.AllowedFlavors)
	}
	def, _, err := s.Quota(ctx, ScopeDefault, 0)
	if err != nil {
		t.Fatal(err)
	}
	if def.AllowedImages != nil || def.AllowedFlavors != nil || def.MaxGPUs == nil || *def.MaxGPUs != 1 {
		t.Errorf("the default quota (no lists) changed: %+v", def)
	}
	// A rename that clashes changes nothing, in the catalog or the lists.
	other := validImage()
	other.Name = "Taken"
	if err := s.CreateImage(ctx, &other); err != nil {
		t.Fatal(err)
	}
	img.Name = "Taken"
	if err := s.UpdateImage(ctx, &img); err == nil {
		t.Fatal("a rename onto another image's name was accepted")
	}
	if q, _, _ := s.Quota(ctx, ScopeGroup, g.ID); !slices.Equal(q.AllowedImages, []string{"PyTorch CUDA 12 (2026)", "Other"}) {
		t.Errorf("a refused rename changed the lists: %q", q.AllowedImages)
	}
	// An image that is not there is ErrNotFound, as before.
	gone := validImage()
	gone.ID = 9999
	if err := s.UpdateImage(ctx, &gone); err != ErrNotFound {
		t.Errorf("updating a missing image: %v, want ErrNotFound", err)
	}
}
