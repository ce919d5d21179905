package models

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A group's booking is bounded by what its members may hold at once
// together, not by the booker's own quota: a TA allowed one GPU books
// three for a class of three; four could never be used in full and are
// refused, saying why; the TA's own booking keeps her own bound.
func TestGroupBookingIsBoundedByItsMembersTogether(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	one := int64(1)
	if err := s.SetQuota(ctx, ScopeDefault, 0, Limits{MaxGPUs: &one}, "root"); err != nil {
		t.Fatal(err)
	}
	g, err := s.CreateGroup(ctx, "class", "")
	if err != nil {
		t.Fatal(err)
	}
	var ta *User
	for _, name := range []string{"tara", "sam", "uma"} {
		u, err := s.CreateUser(ctx, NewUser{Username: name, Password: name + "-password-1"})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AddGroupMember(ctx, g.ID, u.ID); err != nil {
			t.Fatal(err)
		}
		if ta == nil {
			ta = u
		}
	}
	start := time.Now().UTC().Add(time.Hour).Truncate(time.Minute)
	book := func(units int, group bool) error {
		r := &Reservation{UserID: ta.ID, GPUModel: "NVIDIA H100 80GB HBM3", UnitKind: UnitGPU, Units: units,
			StartsAt: start, EndsAt: start.Add(time.Hour), CreatedBy: ta.Username}
		if group {
			r.GroupID, r.GroupName = &g.ID, g.Name
		}
		return s.CreateReservation(ctx, r, 8, false, "", nil)
	}
	if err := book(3, true); err != nil {
		t.Fatalf("3 GPUs for a group of three allowed 1 each: %v", err)
	}
	var qe *QuotaError
	err = book(4, true)
	if !errors.As(err, &qe) || !strings.Contains(qe.Message, "the members of group class may hold at most 3 × H100 80GB HBM3 at once together") {
		t.Fatalf("4 GPUs for the group: %v", err)
	}
	if err := book(2, false); !errors.As(err, &qe) || qe.Limit != "max_gpus" {
		t.Fatalf("2 GPUs for herself with a quota of 1: %v", err)
	}
	// A member allowed two raises the group's together to four.
	sam, err := s.UserByUsername(ctx, "sam")
	if err != nil {
		t.Fatal(err)
	}
	two := int64(2)
	if err := s.SetQuota(ctx, ScopeUser, sam.ID, Limits{MaxGPUs: &two}, "root"); err != nil {
		t.Fatal(err)
	}
	start = start.Add(2 * time.Hour) // after the booking of 3
	if err := book(4, true); err != nil {
		t.Fatalf("4 GPUs for the group, with sam allowed two: %v", err)
	}
}

// Bookings of one holder that overlap are bounded together: two bookings
// of 3 GPUs each were taken for a user allowed 4 at once (and a group's
// several for its members' capacity once each), though the units beyond
// the quota could never be used and were kept from everyone else.
func TestOverlappingBookingsAreBoundedTogether(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	four, one := int64(4), int64(1)
	if err := s.SetQuota(ctx, ScopeDefault, 0, Limits{MaxGPUs: &four}, "root"); err != nil {
		t.Fatal(err)
	}
	ann, err := s.CreateUser(ctx, NewUser{Username: "ann", Password: "ann-password-1"})
	if err != nil {
		t.Fatal(err)
	}
	h0 := time.Now().UTC().Add(time.Hour).Truncate(time.Minute)
	const h100 = "NVIDIA H100 80GB HBM3"
	book := func(user *User, group *Group, units int, from, to int, forHolder string) (*Reservation, error) {
		r := &Reservation{UserID: user.ID, GPUModel: h100, UnitKind: UnitGPU, Units: units,
			StartsAt: h0.Add(time.Duration(from) * time.Hour), EndsAt: h0.Add(time.Duration(to) * time.Hour), CreatedBy: user.Username}
		if group != nil {
			r.GroupID, r.GroupName = &group.ID, group.Name
		}
		return r, s.CreateReservation(ctx, r, 8, false, forHolder, nil)
	}
	first, err := book(ann, nil, 3, 0, 2, "")
	if err != nil {
		t.Fatal(err)
	}
	var qe *QuotaError
	_, err = book(ann, nil, 2, 1, 3, "")
	if !errors.As(err, &qe) || qe.Limit != "max_gpus" || !strings.Contains(qe.Message, "with your other bookings, 5 units would be booked for you at "+h0.Add(time.Hour).Format("2006-01-02 15:04 UTC")+"; your quota allows at most 4 GPUs") {
		t.Fatalf("3 + 2 overlapping for a quota of 4: %v", err)
	}
	_, err = book(ann, nil, 2, 1, 3, "ann")
	if !errors.As(err, &qe) || !strings.Contains(qe.Message, "5 units would be booked for ann at "+h0.Add(time.Hour).Format("2006-01-02 15:04 UTC")+"; their quota") {
		t.Fatalf("an administrator's booking for ann beyond her quota with her others: %v", err)
	}
	if _, err := book(ann, nil, 1, 1, 3, ""); err != nil {
		t.Fatalf("3 + 1 overlapping for a quota of 4: %v", err)
	}
	if _, err := book(ann, nil, 3, 2, 4, ""); err != nil { // after the first: 1 + 3
		t.Fatalf("a booking after the first ends: %v", err)
	}
	// A released booking no longer counts.
	if err := s.ReleaseReservation(ctx, first.ID, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := book(ann, nil, 3, 0, 1, ""); err != nil {
		t.Fatalf("3 in the first's window once it is released: %v", err)
	}

	// A group of three, each allowed 1: its bookings together stay within 3.
	if err := s.SetQuota(ctx, ScopeDefault, 0, Limits{MaxGPUs: &one}, "root"); err != nil {
		t.Fatal(err)
	}
	g, err := s.CreateGroup(ctx, "class", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tara", "sam", "uma"} {
		u, err := s.CreateUser(ctx, NewUser{Username: name, Password: name + "-password-1"})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AddGroupMember(ctx, g.ID, u.ID); err != nil {
			t.Fatal(err)
		}
	}
	tara, err := s.UserByUsername(ctx, "tara")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := book(tara, g, 2, 10, 12, ""); err != nil {
		t.Fatal(err)
	}
	_, err = book(tara, g, 2, 11, 13, "")
	if !errors.As(err, &qe) || !strings.Contains(qe.Message, "with the group's other bookings, 4 × H100 80GB HBM3 would be booked for group class at") ||
		!strings.Contains(qe.Message, "at most 3 × H100 80GB HBM3 at once together") {
		t.Fatalf("2 + 2 overlapping for a group of three allowed 1 each: %v", err)
	}
	if _, err := book(tara, g, 1, 11, 13, ""); err != nil {
		t.Fatalf("2 + 1 for the group: %v", err)
	}
}
