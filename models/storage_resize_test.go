package models

import (
	"context"
	"testing"
	"time"

	"workbench/models/pricing"
)

// A home volume that changes size is billed at each size once: the old
// interval is billed to its next whole second (rule 1), and the new one
// starts there. It started at the resize's instant, and the fraction of a
// second in between (~0.8 s at each resize) was billed at both sizes.
func TestStorageResizeBillsNoSecondTwice(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	u, err := s.CreateUser(ctx, NewUser{Username: "alice", Password: "alice-password-1"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	resized := t0.Add(100*time.Second + 200*time.Millisecond)
	const vol = "wb-home-alice"
	if err := s.RecordVolume(ctx, u.ID, vol, 10_000, t0, time.Time{}, 1000); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordVolume(ctx, u.ID, vol, 20_000, resized, time.Time{}, 1000); err != nil {
		t.Fatal(err)
	}
	ivs, err := s.StorageToBill(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ivs) != 2 || ivs[0].EndedAt == nil || ivs[1].EndedAt != nil {
		t.Fatalf("intervals after a resize: %+v", ivs)
	}
	_, oldBilledTo := pricing.BilledSpan(ivs[0].StartedAt, *ivs[0].EndedAt, 0)
	if want := t0.Add(101 * time.Second); !oldBilledTo.Equal(want) || !ivs[1].StartedAt.Equal(want) {
		t.Fatalf("the 10 GiB size is billed to %s and the 20 GiB one starts at %s; want both at %s", oldBilledTo, ivs[1].StartedAt, want)
	}
	if ivs[1].SizeMilliGiB != 20_000 {
		t.Fatalf("new size %d", ivs[1].SizeMilliGiB)
	}
	// A volume removed and made again under the same name is billed from
	// the old one's billed end at the earliest too.
	if err := s.RemovedHome(ctx, u.ID, vol, resized.Add(10*time.Second+300*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordVolume(ctx, u.ID, vol, 1_000, resized.Add(time.Minute), resized.Add(10*time.Second), 1000); err != nil {
		t.Fatal(err)
	}
	ivs, err = s.StorageToBill(ctx)
	if err != nil {
		t.Fatal(err)
	}
	last := ivs[len(ivs)-1]
	_, prevBilledTo := pricing.BilledSpan(ivs[len(ivs)-2].StartedAt, *ivs[len(ivs)-2].EndedAt, 0)
	if last.StartedAt.Before(prevBilledTo) {
		t.Fatalf("the remade volume is billed from %s, before the removed one's billed end %s", last.StartedAt, prevBilledTo)
	}
}

// A home removed within a second of a measured resize ends the new size
// too: that interval starts at the old size's billed end, the next whole
// second, after the removal. It stayed open, the removed home counted
// against the storage quota, and the next metering took the volume for
// lost (ForgetHome found something to forget: the owner was told).
func TestHomeRemovedJustAfterAResizeEndsTheNewSize(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	u, err := s.CreateUser(ctx, NewUser{Username: "alice", Password: "alice-password-1"})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	resized := t0.Add(100*time.Second + 200*time.Millisecond)
	const vol = "wb-home-alice"
	if err := s.RecordVolume(ctx, u.ID, vol, 10_000, t0, time.Time{}, 1000); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordVolume(ctx, u.ID, vol, 20_000, resized, time.Time{}, 1000); err != nil {
		t.Fatal(err)
	}
	removed := resized.Add(300 * time.Millisecond) // before the new size's start at t0+101 s
	if err := s.RemovedHome(ctx, u.ID, vol, removed); err != nil {
		t.Fatal(err)
	}
	if used, err := s.StorageUsedMilliGiB(ctx, u.ID); err != nil || used != 0 {
		t.Errorf("home storage after the removal: %d milli-GiB (%v), want 0", used, err)
	}
	ivs, err := s.StorageToBill(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, iv := range ivs {
		if iv.EndedAt == nil {
			t.Fatalf("an interval is still open after the removal: %+v", iv)
		}
		if iv.EndedAt.Before(iv.StartedAt) {
			t.Errorf("an interval ends before it starts: %+v", iv)
		}
		if iv.SizeMilliGiB == 20_000 && !iv.EndedAt.Equal(iv.StartedAt) {
			t.Errorf("the new size, begun after the removal, is billed from %s to %s; want nothing", iv.StartedAt, iv.EndedAt)
		}
	}
	if known, _, err := s.ForgetHome(ctx, u.ID, vol); err != nil || known {
		t.Errorf("the next metering, not finding the volume, has something to forget (%v, %v): the owner would be told it was lost", known, err)
	}
}
