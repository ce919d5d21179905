package models

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"
)

// TestReservationCapAmongGroupsThatSetOne: a user's cap on booking is the
// most generous of the caps their groups set; a group without a cap takes
// no part (it does not lift the cap to "none", nor bring back the
// default), as for quotas; the default only where no group has one.
func TestReservationCapAmongGroupsThatSetOne(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	u, err := s.CreateUser(ctx, NewUser{Username: "carol", Password: "carol-password-1"})
	if err != nil {
		t.Fatal(err)
	}
	group := func(name string) int64 {
		g, err := s.CreateGroup(ctx, name, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.AddGroupMember(ctx, g.ID, u.ID); err != nil {
			t.Fatal(err)
		}
		return g.ID
	}
	capOf := func() string {
		c, err := s.ReservationCapOf(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if c == nil {
			return "none"
		}
		return strconv.FormatInt(*c, 10)
	}
	set := func(scope string, id int64, hours int64) {
		if err := s.SetReservationCap(ctx, scope, id, &hours, "root"); err != nil {
			t.Fatal(err)
		}
	}
	lab, club := group("lab"), group("reading club")
	if got := capOf(); got != "none" {
		t.Fatalf("no caps anywhere: %s, want none", got)
	}
	set(ScopeGroup, lab, 10)
	if got := capOf(); got != "10" {
		t.Errorf("the lab's cap with the club capping nothing: %s, want 10", got)
	}
	set(ScopeDefault, 0, 30)
	if got := capOf(); got != "10" {
		t.Errorf("a default of 30 with the lab's 10: %s, want the lab's 10", got)
	}
	set(ScopeGroup, club, 20)
	if got := capOf(); got != "20" {
		t.Errorf("the lab's 10 and the club's 20: %s, want the most generous, 20", got)
	}
	set(ScopeUser, u.ID, 1)
	if got := capOf(); got != "1" {
		t.Errorf("her own cap: %s, want 1", got)
	}
}

// A booking cap is a number of unit-hours bounded as a quota's numbers
// are: 99999999999 was stored (the quota form refuses it as too large).
func TestReservationCapBounded(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	for _, n := range []int64{-1, MaxQuotaNumber + 1, 99_999_999_999} {
		err := s.SetReservationCap(ctx, ScopeDefault, 0, &n, "admin")
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "unit_hours_per_week" {
			t.Errorf("cap %d: %v, want refused", n, err)
		}
	}
	ok := int64(MaxQuotaNumber)
	if err := s.SetReservationCap(ctx, ScopeDefault, 0, &ok, "admin"); err != nil {
		t.Fatalf("cap %d: %v", ok, err)
	}
}

// A booking past the weekly cap is told the week's total with it, and the
// limit's unit, in numbers written alike: it read "this booking would
// reserve 8.0 unit-hours in the week of 2026-12-07; your limit is 4".
func TestReservationCapRefusalNamesTheWeeksTotal(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	u, err := s.CreateUser(ctx, NewUser{Username: "carol", Password: "carol-password-1"})
	if err != nil {
		t.Fatal(err)
	}
	four := int64(4)
	if err := s.SetReservationCap(ctx, ScopeUser, u.ID, &four, "root"); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		hours time.Duration
		want  string
	}{
		{4 * time.Hour, "with this booking, your bookings in the week of 2026-12-07 would come to 8 unit-hours; your limit is 4 unit-hours a week"},
		{150 * time.Minute, "with this booking, your bookings in the week of 2026-12-07 would come to 5 unit-hours; your limit is 4 unit-hours a week"},
		{135 * time.Minute, "with this booking, your bookings in the week of 2026-12-07 would come to 4.5 unit-hours; your limit is 4 unit-hours a week"},
	} {
		err := checkReservationCap(s.db.WithContext(ctx), &Reservation{UserID: u.ID, Units: 2, StartsAt: at, EndsAt: at.Add(tc.hours)})
		var qe *QuotaError
		if !errors.As(err, &qe) || qe.Message != tc.want {
			t.Errorf("2 units for %s: %v; want %q", tc.hours, err, tc.want)
		}
	}
}
