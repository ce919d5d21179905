package models

import (
	"context"
	"testing"
)

// TestCatalogAndPriceCachesFollowWrites: the cached catalog and price list
// show a write at once, through the store's own methods and through a raw
// statement alike (issue 15: cached, invalidated on change).
func TestCatalogAndPriceCachesFollowWrites(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()

	before, err := s.ListImages(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	img := validImage()
	if err := s.CreateImage(ctx, &img); err != nil {
		t.Fatal(err)
	}
	after, _ := s.ListImages(ctx, false)
	if len(after) != len(before)+1 {
		t.Fatalf("images after create: %d, want %d", len(after), len(before)+1)
	}
	img.Enabled = false
	if err := s.UpdateImage(ctx, &img); err != nil {
		t.Fatal(err)
	}
	if enabled, _ := s.ListImages(ctx, true); len(enabled) != len(before) {
		t.Fatalf("enabled images after disabling the new one: %d, want %d", len(enabled), len(before))
	}
	// A caller changing its copy does not change the cache.
	after, _ = s.ListImages(ctx, false)
	after[0].Name = "changed by a caller"
	if again, _ := s.ListImages(ctx, false); again[0].Name == "changed by a caller" {
		t.Fatal("ListImages handed out the cached slice itself")
	}
	if err := s.db.Exec("UPDATE images SET name = 'renamed' WHERE id = ?", img.ID).Error; err != nil {
		t.Fatal(err)
	}
	found := false
	all, _ := s.ListImages(ctx, false)
	for _, i := range all {
		found = found || i.Name == "renamed"
	}
	if !found {
		t.Fatal("a raw UPDATE did not invalidate the cached catalog")
	}

	fls, _ := s.ListFlavors(ctx, false)
	f := Flavor{Name: "cache-test", CPUMilli: 1000, MemoryMiB: 1024, ShmMiB: 64, Enabled: true}
	if err := s.CreateFlavor(ctx, &f); err != nil {
		t.Fatal(err)
	}
	if again, _ := s.ListFlavors(ctx, false); len(again) != len(fls)+1 {
		t.Fatalf("flavors after create: %d, want %d", len(again), len(fls)+1)
	}

	sch, err := s.Schedules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(sch["cpu"]) != 0 {
		t.Fatalf("cpu schedule of an empty store: %v", sch["cpu"])
	}
	if err := s.AddPriceRate(ctx, &PriceRate{Resource: "cpu", Micros: 5}); err != nil {
		t.Fatal(err)
	}
	sch, _ = s.Schedules(ctx)
	if len(sch[PriceKey("cpu", "")]) != 1 {
		t.Fatalf("cpu schedule after adding a rate: %v", sch)
	}
}
