package orchestrator

import (
	"context"
	"testing"
	"time"
)

// Saving a workbench as an image and deleting that image show at once in
// ImageSize, whose answers are otherwise kept for a while.
func TestImageSizeForgetsOnSaveAndDelete(t *testing.T) {
	r := newMemRig(t)
	ctx := context.Background()
	owner, err := r.store.UserByID(ctx, r.wb.OwnerID)
	if err != nil {
		t.Fatal(err)
	}
	ref := r.m.savedImageRef(owner.ID, "env", 1)
	if present, _, err := r.m.ImageSize(ctx, ref); err != nil || present {
		t.Fatalf("saved image present before the save (%v)", err)
	}
	img, err := r.m.SaveImage(ctx, r.wb.ID, owner, SaveImageRequest{Name: "env", RunningOK: true})
	if err != nil {
		t.Fatal(err)
	}
	if img.Image != ref {
		t.Fatalf("saved as %q, want %q", img.Image, ref)
	}
	if present, _, _ := r.m.ImageSize(ctx, ref); !present {
		t.Error("the saved image is not present right after the save")
	}
	if err := r.m.DeleteSavedImage(ctx, img); err != nil {
		t.Fatal(err)
	}
	if present, _, _ := r.m.ImageSize(ctx, ref); present {
		t.Error("the saved image is still present right after its deletion")
	}
}

// An inspect that began before a forget does not store its answer: it may
// predate the pull or load that caused the forget.
func TestImagePresenceDropsAnswersOlderThanAForget(t *testing.T) {
	var p imagePresence
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	_, gen, ok := p.get("x:1", now)
	if ok {
		t.Fatal("empty cache answered")
	}
	p.forget() // a pull ends while the inspect is under way
	p.put("x:1", gen, presenceEntry{present: false, at: now})
	if _, _, ok := p.get("x:1", now); ok {
		t.Error("an answer read before a forget was kept")
	}
	_, gen, _ = p.get("x:1", now)
	p.put("x:1", gen, presenceEntry{present: true, size: 5, at: now})
	if e, _, ok := p.get("x:1", now.Add(imagePresenceFresh-time.Millisecond)); !ok || !e.present {
		t.Error("a fresh answer was not kept")
	}
	if _, _, ok := p.get("x:1", now.Add(imagePresenceFresh)); ok {
		t.Error("an answer was kept past its expiry")
	}
	if _, _, ok := p.get("x:1", now.Add(-time.Second)); ok {
		t.Error("an answer from the future (a clock set back) was used")
	}
}
