package models

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A booking refused for want of units says how many more can be booked
// then, not the total: "only 8 × slice … can be booked; 8 are already
// reserved" read as if 8 were free.
func TestFullWindowSaysHowManyMoreCanBeBooked(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	const h100 = "NVIDIA H100 80GB HBM3"
	u, err := s.CreateUser(ctx, NewUser{Username: "ta", Password: "ta-password-1"})
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2099, 12, 7, 0, 30, 0, 0, time.UTC)
	book := func(units int) error {
		r := Reservation{UserID: u.ID, CreatedBy: "ta", GPUModel: h100, UnitKind: UnitSlice, Units: units,
			StartsAt: from, EndsAt: from.Add(2 * time.Hour)}
		return s.CreateReservation(ctx, &r, 8, false, "", nil)
	}
	refusal := func(units int) string {
		t.Helper()
		var qe *QuotaError
		if err := book(units); !errors.As(err, &qe) {
			t.Fatalf("booking %d with the window full: %v, want a QuotaError", units, err)
		}
		return qe.Message
	}
	if err := book(5); err != nil {
		t.Fatal(err)
	}
	want := "only 3 more × slice of a shared H100 80GB HBM3 can be booked from 2099-12-07 00:30 UTC; 5 of 8 are already reserved then"
	if got := refusal(4); got != want {
		t.Fatalf("refusal\n got %q\nwant %q", got, want)
	}
	if err := book(3); err != nil {
		t.Fatal(err)
	}
	want = "no slice of a shared H100 80GB HBM3 can be booked from 2099-12-07 00:30 UTC: all 8 are already reserved then"
	if got := refusal(1); got != want {
		t.Fatalf("refusal\n got %q\nwant %q", got, want)
	}
}
