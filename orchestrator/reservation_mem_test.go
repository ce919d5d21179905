package orchestrator

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// In memory: during its window a reservation's units go only to its
// booker (others queue, told why); a reservation nobody uses is released
// after the no-show time; bookings cannot exceed the pool.
func TestMemReservationWindowAndNoShow(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	for i := 0; i < 6; i++ { // the rig's own + 6 = 7 of 8 held
		r.waitState(t, r.launch(t, r.alice, fmt.Sprintf("a%d", i), LaunchRequest{}).ID, models.StateRunning)
	}
	carol, dave := r.user(t, "carol"), r.user(t, "dave")
	start := r.m.now().Add(time.Hour)
	model := "NVIDIA H100 80GB HBM3"
	if _, err := r.m.Reserve(ctx, carol, ReserveRequest{Model: model, Units: 1, Start: start, End: start.Add(2 * time.Hour), Note: "course"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.m.Reserve(ctx, dave, ReserveRequest{Model: model, Units: 8, Start: start, End: start.Add(time.Hour)}); err == nil {
		t.Fatal("booked 9 of 8 GPUs")
	}
	noShow, err := r.m.Reserve(ctx, dave, ReserveRequest{Model: model, Units: 1, Start: start, End: start.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	r.advance(time.Hour) // the window opens: 1 free, carol's and dave's
	other := r.launch(t, r.alice, "other", LaunchRequest{Queue: true})
	w, _ := r.store.WorkbenchByID(ctx, other.ID)
	if w.State != models.StateQueued || !strings.Contains(w.QueueReason, "(2 reserved for someone else now)") {
		t.Fatalf("alice during the window: %s %q", w.State, w.QueueReason)
	}
	mine := r.launch(t, carol, "booked", LaunchRequest{Queue: true})
	r.waitState(t, mine.ID, models.StateRunning)
	// Dave launched nothing: released after the no-show time, and the
	// unit goes to the queue. (A GPU frees first: carol took the last.)
	r.advance(r.m.opt.ReservationNoShow)
	if err := r.m.Stop(ctx, r.wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, other.ID, models.StateRunning)
	got, err := r.store.ReservationByID(ctx, noShow.ID)
	if err != nil || got.ReleasedAt == nil || !strings.HasPrefix(got.ReleaseReason, "no-show") {
		t.Fatalf("dave's reservation: %+v (%v)", got, err)
	}
	if c, _ := r.store.Reservations(ctx, r.m.now()); len(c) != 1 || c[0].UserID != carol.ID {
		t.Fatalf("reservations left: %+v", c)
	}
}

// In memory: a launch into a booking that has not begun says in its
// history that it waits for the booking, not "as soon as its GPUs are
// free" (they may be free now), and starts when the window opens.
func TestMemLaunchIntoAFutureBookingSaysSo(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	carol := r.user(t, "carol")
	start := r.m.now().Add(time.Hour)
	res, err := r.m.Reserve(ctx, carol, ReserveRequest{Model: "NVIDIA H100 80GB HBM3", Units: 1, Start: start, End: start.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	wb := r.launch(t, carol, "booked", LaunchRequest{Queue: true, Reservation: res.ID})
	if wb.State != models.StateQueued {
		t.Fatalf("a launch into a booking an hour ahead is %s", wb.State)
	}
	hist, err := r.store.WorkbenchHistory(ctx, wb.ID)
	if err != nil || len(hist) != 1 {
		t.Fatalf("history %+v (%v)", hist, err)
	}
	want := fmt.Sprintf("queued: it starts when your reservation #%d opens, at %s UTC", res.ID, start.UTC().Format("2006-01-02 15:04"))
	if hist[0].Message != want {
		t.Fatalf("queued as %q, want %q", hist[0].Message, want)
	}
	r.advance(time.Hour)
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, wb.ID, models.StateRunning)
}

// In memory: a window already open when it is booked starts at the
// booking, as docs/scheduling.md says: its unused time (billed when the
// admin setting is on) and its no-show clock do not reach back to a start
// before the booking existed (a booking made at 01:06 for 00:30–01:30 was
// billed 36 unused minutes from 00:30).
func TestMemBookingAnOpenWindowStartsNow(t *testing.T) {
	t.Parallel()
	r := newQueueRig(t)
	ctx := context.Background()
	carol := r.user(t, "carol")
	now := r.m.now().Truncate(time.Second)
	got, err := r.m.Reserve(ctx, carol, ReserveRequest{Model: "NVIDIA H100 80GB HBM3", Units: 1, Start: now.Add(-36 * time.Minute), End: now.Add(24 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if !got.StartsAt.Equal(now) {
		t.Fatalf("an open window booked at %s starts %s, want the booking time", now, got.StartsAt)
	}
	stored, err := r.store.ReservationByID(ctx, got.ID)
	if err != nil || !stored.StartsAt.Equal(now) {
		t.Fatalf("stored start %v (%v), want %s", stored.StartsAt, err, now)
	}
	// Nothing used: its unused unit-time is what lies after the booking.
	r.advance(24 * time.Minute)
	if _, unused, _, err := r.m.reservationUse(ctx, stored, r.m.now()); err != nil || unused != int64((24*time.Minute)/time.Second) {
		t.Fatalf("unused unit-seconds %d (%v), want %d (the 24 minutes after the booking)", unused, err, int64((24*time.Minute)/time.Second))
	}
}
