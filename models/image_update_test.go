package models

import (
	"context"
	"slices"
	"testing"
)

// TestImageUpdateStoresEveryField: an update stores the extra ports (they
// were left out: an admin's new ports vanished while the answer echoed
// them) and hands the caller the stored image, timestamps included (the
// API answered created_at 0001-01-01).
func TestImageUpdateStoresEveryField(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	img := validImage()
	if err := s.CreateImage(ctx, &img); err != nil {
		t.Fatal(err)
	}
	upd := Image{ID: img.ID, Name: img.Name, Image: img.Image, StartCommand: img.StartCommand, Enabled: true, ExtraPorts: []int{6006, 8050}}
	if err := s.UpdateImage(ctx, &upd); err != nil {
		t.Fatal(err)
	}
	got, err := s.ImageByID(ctx, img.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.ExtraPorts, []int{6006, 8050}) {
		t.Errorf("stored extra ports %v, want [6006 8050]", got.ExtraPorts)
	}
	if upd.CreatedAt.IsZero() || upd.UpdatedAt.IsZero() || !upd.CreatedAt.Equal(got.CreatedAt) {
		t.Errorf("the caller's image after the update: created %v updated %v, want the stored times (%v)", upd.CreatedAt, upd.UpdatedAt, got.CreatedAt)
	}
	// Back to none.
	upd.ExtraPorts = nil
	if err := s.UpdateImage(ctx, &upd); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ImageByID(ctx, img.ID); len(got.ExtraPorts) != 0 {
		t.Errorf("extra ports after clearing them: %v", got.ExtraPorts)
	}
}
