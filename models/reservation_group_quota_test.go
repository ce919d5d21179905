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
	if err := book(4, true); err != nil {
		t.Fatalf("4 GPUs for the group, with sam allowed two: %v", err)
	}
}
