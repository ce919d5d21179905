package orchestrator

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"workbench/models"
	"workbench/models/pricing"
)

func (r *unitRig) newUser(t *testing.T, name string) *models.User {
	t.Helper()
	u, err := r.store.CreateUser(context.Background(), models.NewUser{Username: name, Password: name + "-password", Role: "user"})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// Reservations of MIG instances (issue 12 §4 for every kind of unit): a
// launch naming a booking before its window waits for it and starts when
// it opens; during the window a booking's idle units are held back from
// launches of others with or without the queue; a booking nobody uses is
// released after the no-show time; once over, each booking is settled and,
// with the admin setting on, its unused unit-time billed at the instance
// rate; the report gives reserved, used and unused unit-hours per user.
func TestMemReservationMIGPinnedNoShowAndBilling(t *testing.T) {
	t.Parallel()
	r, advance := clockedUnitRig(t)
	ctx := context.Background()
	mr := r.mem()
	carol, dave := r.newUser(t, "carol"), r.newUser(t, "dave")
	model := r.gpus[0].Model
	t0 := r.m.now()
	start := t0.Add(time.Hour)
	mig := func(u *models.User, units int, from, to time.Time) (*models.Reservation, error) {
		return r.m.Reserve(ctx, u, ReserveRequest{Kind: models.UnitMIG, Model: model, Profile: "1g.10gb", Units: units, Start: from, End: to})
	}
	if _, err := mig(carol, 3, start, start.Add(time.Hour)); err == nil || !strings.Contains(err.Error(), "2 × MIG 1g.10gb") {
		t.Fatalf("booked 3 of 2 instances: %v", err)
	}
	mine, err := mig(carol, 1, start, start.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if mine.UnitKind != models.UnitMIG || mine.MIGProfile != "1g.10gb" || mine.UnitLabel() != "MIG 1g.10gb of H100 80GB HBM3" {
		t.Fatalf("booking %+v", mine)
	}
	noShow, err := mig(dave, 1, start, start.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mig(dave, 1, start, start.Add(time.Hour)); err == nil {
		t.Fatal("a third booking of 2 instances at once was accepted")
	}
	// Slices are a pool of their own: both slices of the shared GPU can
	// be booked in the same window.
	if _, err := r.m.Reserve(ctx, dave, ReserveRequest{Kind: models.UnitSlice, Model: model, Units: 2, Start: start.Add(5 * time.Hour), End: start.Add(6 * time.Hour)}); err != nil {
		t.Fatalf("slice booking: %v", err)
	}
	if _, err := r.m.Reserve(ctx, dave, ReserveRequest{Kind: models.UnitSlice, Model: model, Units: 3, Start: start.Add(7 * time.Hour), End: start.Add(8 * time.Hour)}); err == nil {
		t.Fatal("booked 3 slices of a GPU shared in 2")
	}

	// A launch naming carol's booking before its window: refused without
	// the queue, queued (and held) with it.
	launch := func(u *models.User, name string, req LaunchRequest) (*models.Workbench, error) {
		req.Name, req.Image, req.Flavor = name, "mem", "mig-1g"
		return r.m.Launch(ctx, u, req)
	}
	var ve *models.ValidationError
	if _, err := launch(carol, "early", LaunchRequest{Reservation: mine.ID}); !errors.As(err, &ve) || ve.Field != "reservation" {
		t.Fatalf("launch before the window without queue: %v", err)
	}
	if _, err := launch(dave, "not-his", LaunchRequest{Reservation: mine.ID, Queue: true}); !errors.As(err, &ve) || ve.Field != "reservation" {
		t.Fatalf("launch naming someone else's booking: %v", err)
	}
	if _, err := r.m.Launch(ctx, carol, LaunchRequest{Name: "wrong-kind", Image: "mem", Flavor: "slice", Reservation: mine.ID, Queue: true}); !errors.As(err, &ve) ||
		!strings.Contains(ve.Message, "asks for other units") {
		t.Fatalf("a slice launch naming a MIG booking: %v", err)
	}
	pinned, err := launch(carol, "pinned", LaunchRequest{Reservation: mine.ID, Queue: true})
	if err != nil {
		t.Fatal(err)
	}
	if pinned.State != models.StateQueued || pinned.ReservationID == nil || *pinned.ReservationID != mine.ID ||
		!strings.Contains(pinned.QueueReason, "waiting for your reservation #") {
		t.Fatalf("pinned launch: %s reservation %v reason %q", pinned.State, pinned.ReservationID, pinned.QueueReason)
	}
	// Both instances are free now, but it cannot start before its window.
	if pinned.EstimatedStart == nil || !pinned.EstimatedStart.Equal(start) {
		t.Fatalf("a launch waiting for its window is estimated to start at %v, want the window's opening %v", pinned.EstimatedStart, start)
	}
	if pinned.QueueExpiresAt == nil || !pinned.QueueExpiresAt.Equal(start.Add(r.m.opt.QueueMaxWait)) {
		t.Fatalf("a launch waiting for its window expires at %v", pinned.QueueExpiresAt)
	}
	// Billing of reserved-but-unused time is on (bookings settled from
	// now on).
	if err := r.store.SetReservationBillUnused(ctx, true); err != nil {
		t.Fatal(err)
	}
	// Both instances are free: alice takes one before the window.
	alice1 := r.launchRunning(t, "alice-1", "mig-1g")

	// The window opens: carol's launch starts on the other instance.
	advance(time.Hour)
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	got := mr.waitState(t, pinned.ID, models.StateRunning, models.StateFailed)
	if got.State != models.StateRunning || len(got.Units) != 1 || got.Units[0].Kind != models.UnitMIG {
		t.Fatalf("pinned at the window: %s %+v (%s)", got.State, got.Units, got.Reason)
	}
	// Alice's instance frees; dave's idle booking holds it back from her,
	// with or without the queue.
	if err := r.m.Stop(ctx, alice1.ID, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := launch(r.owner, "alice-2", LaunchRequest{}); refusedCode(err) != "no_capacity" || !strings.Contains(err.Error(), "1 reserved for someone else now") {
		t.Fatalf("launch without queue onto a booked instance: %v", err)
	}
	waits, err := launch(r.owner, "alice-3", LaunchRequest{Queue: true})
	if err != nil {
		t.Fatal(err)
	}
	if w, _ := r.store.WorkbenchByID(ctx, waits.ID); w.State != models.StateQueued || !strings.Contains(w.QueueReason, "(1 reserved for someone else now)") {
		t.Fatalf("queued launch during dave's booking: %s %q", w.State, w.QueueReason)
	}
	// Dave never shows: released after the no-show time, and alice's
	// queued launch takes the instance.
	advance(r.m.opt.ReservationNoShow)
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	mr.waitState(t, waits.ID, models.StateRunning)
	rel, _ := r.store.ReservationByID(ctx, noShow.ID)
	if rel.ReleasedAt == nil || !strings.HasPrefix(rel.ReleaseReason, "no-show") {
		t.Fatalf("dave's booking: %+v", rel)
	}

	// Carol stops 1 h into her 2 h booking.
	advance(time.Hour - r.m.opt.ReservationNoShow)
	if err := r.m.Stop(ctx, pinned.ID, ""); err != nil {
		t.Fatal(err)
	}
	advance(time.Hour)
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	scheds, err := r.store.Schedules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rate, ok := scheds[pricing.ScheduleKey(pricing.MIG, "1g.10gb")].At(start)
	if !ok || rate.Micros <= 0 {
		t.Fatalf("no 1g.10gb rate: %v", scheds)
	}
	for _, c := range []struct {
		id             int64
		user           int64
		used, unused   int64
		wantBilledPart int64 // unused seconds billed
	}{
		{mine.ID, carol.ID, 3600, 3600, 3600},
		{noShow.ID, dave.ID, 0, int64(r.m.opt.ReservationNoShow / time.Second), int64(r.m.opt.ReservationNoShow / time.Second)},
	} {
		b, _ := r.store.ReservationByID(ctx, c.id)
		if b.SettledAt == nil || b.UsedUnitSeconds != c.used || b.UnusedUnitSeconds != c.unused {
			t.Fatalf("booking %d settled %v used %d unused %d; want used %d unused %d",
				c.id, b.SettledAt, b.UsedUnitSeconds, b.UnusedUnitSeconds, c.used, c.unused)
		}
		lines, err := r.store.Statement(ctx, c.user, t0.Add(-time.Hour), r.m.now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		// The unused time in lines cut at clock hours (where the test's
		// clock puts them), each priced and rounded on its own.
		var billed, unitSecs, want int64
		for _, l := range lines {
			if l.Resource == models.ResourceReservation {
				billed += l.AmountMicros
				unitSecs += l.Seconds * l.QuantityMilli / pricing.MilliUnits
				want += pricing.Amount(rate.Micros, l.QuantityMilli, l.Seconds, false)
				if l.GPUModel != "1g.10gb" || !strings.Contains(l.Note, "reserved but unused") || l.RateMicros != rate.Micros {
					t.Errorf("line %+v", l)
				}
			}
		}
		if unitSecs != c.wantBilledPart || billed != want || b.BilledMicros != billed {
			t.Fatalf("user %d: reservation lines over %d unit-seconds, %d billed (booking says %d); want %d unit-seconds at the rate, %d",
				c.user, unitSecs, billed, b.BilledMicros, c.wantBilledPart, want)
		}
	}
	// Settling again adds nothing.
	reservationLines := func() int {
		lines, _ := r.store.Statement(ctx, carol.ID, t0.Add(-time.Hour), r.m.now().Add(time.Hour))
		n := 0
		for _, l := range lines {
			if l.Resource == models.ResourceReservation {
				n++
			}
		}
		return n
	}
	before := reservationLines()
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if n := reservationLines(); n != before || n == 0 {
		t.Fatalf("%d reservation lines for carol after a second drain, %d before", n, before)
	}
	rows, err := r.m.ReservedUnused(ctx, t0, r.m.now())
	if err != nil {
		t.Fatal(err)
	}
	byUser := map[int64]UnusedRow{}
	for _, row := range rows {
		byUser[row.UserID] = row
	}
	if c := byUser[carol.ID]; c.Reservations != 1 || c.ReservedUnitSecs != 7200 || c.UsedUnitSecs != 3600 || c.UnusedUnitSecs != 3600 {
		t.Fatalf("carol's report line %+v", c)
	}
	if d := byUser[dave.ID]; d.Reservations != 1 || d.UnusedUnitSecs != 900 || d.UsedUnitSecs != 0 { // the slice booking has not started
		t.Fatalf("dave's report line %+v", d)
	}
}

// The weekly cap: a user may hold bookings of at most the cap's unit-hours
// in each calendar week (Monday 00:00 UTC); a group's cap beats the
// default; an administrator books beyond it; a released booking counts
// only what it held.
func TestMemReservationWeeklyCap(t *testing.T) {
	t.Parallel()
	r, _ := clockedUnitRig(t)
	ctx := context.Background()
	carol := r.newUser(t, "carol")
	admin, err := r.store.CreateUser(ctx, models.NewUser{Username: "root", Password: "root-password", Role: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	model := r.gpus[0].Model
	// Next Monday 09:00 UTC: every booking below lies in one week.
	monday := models.WeekStart(r.m.now()).AddDate(0, 0, 7).Add(9 * time.Hour)
	three := int64(3)
	if err := r.store.SetReservationCap(ctx, models.ScopeDefault, 0, &three, "root"); err != nil {
		t.Fatal(err)
	}
	book := func(by *models.User, kind string, units int, from time.Time, hours int) (*models.Reservation, error) {
		profile := ""
		if kind == models.UnitMIG {
			profile = "1g.10gb"
		}
		return r.m.Reserve(ctx, carol, ReserveRequest{Kind: kind, Model: model, Profile: profile, Units: units, Start: from,
			End: from.Add(time.Duration(hours) * time.Hour), By: by})
	}
	first, err := book(carol, models.UnitMIG, 1, monday, 2) // 2 unit-hours
	if err != nil {
		t.Fatal(err)
	}
	var re *RefusedError
	_, err = book(carol, models.UnitSlice, 1, monday.Add(24*time.Hour), 2) // 4 > 3
	if !errors.As(err, &re) || re.Limit != "reserved_unit_hours_per_week" || !strings.Contains(re.Message, "would come to 4 unit-hours; your limit is 3 unit-hours a week") {
		t.Fatalf("over the weekly cap: %v", err)
	}
	// Next week is another week.
	if _, err := book(carol, models.UnitSlice, 1, monday.AddDate(0, 0, 7), 2); err != nil {
		t.Fatalf("next week: %v", err)
	}
	// An administrator books for her beyond the cap.
	if _, err := book(admin, models.UnitGPU, 1, monday.Add(48*time.Hour), 5); err != nil {
		t.Fatalf("admin's booking: %v", err)
	}
	// Cancelling the first before it starts gives its hours back... the
	// admin's 5 hours still count: 5 + 1 > 3.
	if err := r.m.CancelReservation(ctx, carol, first.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := book(carol, models.UnitSlice, 1, monday.Add(72*time.Hour), 1); !errors.As(err, &re) {
		t.Fatalf("with an admin's 5 h booked: %v", err)
	}
	// A group with a larger cap lifts hers.
	g, err := r.store.CreateGroup(ctx, "lab", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.store.AddGroupMember(ctx, g.ID, carol.ID); err != nil {
		t.Fatal(err)
	}
	ten := int64(10)
	if err := r.store.SetReservationCap(ctx, models.ScopeGroup, g.ID, &ten, "root"); err != nil {
		t.Fatal(err)
	}
	if capOf, _ := r.store.ReservationCapOf(ctx, carol.ID); capOf == nil || *capOf != 10 {
		t.Fatalf("cap of a group member: %v", capOf)
	}
	if _, err := book(carol, models.UnitSlice, 1, monday.Add(72*time.Hour), 4); err != nil { // 5 + 4 ≤ 10
		t.Fatalf("within the group's cap: %v", err)
	}
	// Her own row beats the group's.
	one := int64(1)
	if err := r.store.SetReservationCap(ctx, models.ScopeUser, carol.ID, &one, "root"); err != nil {
		t.Fatal(err)
	}
	if _, err := book(carol, models.UnitSlice, 1, monday.AddDate(0, 0, 14), 2); !errors.As(err, &re) {
		t.Fatalf("over her own cap of 1: %v", err)
	}
}

// A group's booking: carol books a MIG instance for her group, dave (a
// member) runs on it for half its window; the settlement counts dave's use
// and bills the other half to carol, the booker, as the group's line.
func TestMemGroupReservationUseAndSettlement(t *testing.T) {
	t.Parallel()
	r, advance := clockedUnitRig(t)
	ctx := context.Background()
	mr := r.mem()
	carol, dave, erin := r.newUser(t, "carol"), r.newUser(t, "dave"), r.newUser(t, "erin")
	g, err := r.store.CreateGroup(ctx, "lab", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []*models.User{carol, dave} {
		if err := r.store.AddGroupMember(ctx, g.ID, u.ID); err != nil {
			t.Fatal(err)
		}
	}
	lab, _ := r.store.GroupByName(ctx, "lab")
	if err := r.store.SetReservationBillUnused(ctx, true); err != nil {
		t.Fatal(err)
	}
	model := r.gpus[0].Model
	start := r.m.now().Add(time.Hour)
	book := func(u *models.User) (*models.Reservation, error) {
		return r.m.Reserve(ctx, u, ReserveRequest{Kind: models.UnitMIG, Model: model, Profile: "1g.10gb", Units: 1,
			Start: start, End: start.Add(2 * time.Hour), Group: lab})
	}
	var ve *models.ValidationError
	if _, err := book(erin); !errors.As(err, &ve) || ve.Field != "group" {
		t.Fatalf("erin books for a group she is not in: %v", err)
	}
	b, err := book(carol)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.m.Launch(ctx, erin, LaunchRequest{Name: "e", Image: "mem", Flavor: "mig-1g", Reservation: b.ID, Queue: true}); !errors.As(err, &ve) || ve.Field != "reservation" {
		t.Fatalf("erin names the group's booking: %v", err)
	}
	pinned, err := r.m.Launch(ctx, dave, LaunchRequest{Name: "d", Image: "mem", Flavor: "mig-1g", Reservation: b.ID, Queue: true})
	if err != nil {
		t.Fatalf("dave, a member, names the group's booking: %v", err)
	}
	advance(time.Hour)
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	mr.waitState(t, pinned.ID, models.StateRunning)
	advance(time.Hour)
	// While the window runs, the admin's report counts the members' use
	// too (it read the group booking without its members: all unused).
	rows, err := r.m.ReservedUnused(ctx, start.Add(-time.Hour), r.m.now())
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].UserID != carol.ID || rows[0].UsedUnitSecs != 3600 || rows[0].UnusedUnitSecs != 0 || rows[0].UnsettledBookings != 1 {
		t.Fatalf("the report while dave runs on the group's booking: %+v; want carol's booking, 3600 used, 0 unused, unsettled", rows)
	}
	if err := r.m.Stop(ctx, pinned.ID, ""); err != nil {
		t.Fatal(err)
	}
	advance(time.Hour)
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := r.store.ReservationByID(ctx, b.ID)
	if got.SettledAt == nil || got.UsedUnitSeconds != 3600 || got.UnusedUnitSeconds != 3600 {
		t.Fatalf("settled %v used %d unused %d; want dave's 3600 used, 3600 unused", got.SettledAt, got.UsedUnitSeconds, got.UnusedUnitSeconds)
	}
	lines, err := r.store.Statement(ctx, carol.ID, start.Add(-time.Hour), r.m.now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var secs int64 // the unused hour, cut at clock hours as usage is
	for _, l := range lines {
		if l.Resource == models.ResourceReservation {
			secs += l.Seconds
			if l.GroupName != "lab" || !strings.Contains(l.Note, "for group lab") || l.AmountMicros <= 0 {
				t.Errorf("carol's line %+v: want the group's, priced", l)
			}
		}
	}
	if secs != 3600 {
		t.Fatalf("carol's reservation lines bill %d s, want the unused 3600", secs)
	}
}

// A member who leaves the group while their launch waits for the group's
// booking to open no longer launches on it: the launch queues like any
// other (here a MIG instance is free, so it starts at once) instead of
// telling them it waits for "your reservation".
func TestMemGroupReservationMemberLeavesWhileQueued(t *testing.T) {
	t.Parallel()
	r, _ := clockedUnitRig(t)
	ctx := context.Background()
	mr := r.mem()
	carol, dave := r.newUser(t, "carol"), r.newUser(t, "dave")
	g, err := r.store.CreateGroup(ctx, "lab", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []*models.User{carol, dave} {
		if err := r.store.AddGroupMember(ctx, g.ID, u.ID); err != nil {
			t.Fatal(err)
		}
	}
	lab, _ := r.store.GroupByName(ctx, "lab")
	start := r.m.now().Add(time.Hour)
	b, err := r.m.Reserve(ctx, carol, ReserveRequest{Kind: models.UnitMIG, Model: r.gpus[0].Model, Profile: "1g.10gb", Units: 1,
		Start: start, End: start.Add(2 * time.Hour), Group: lab})
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := r.m.Launch(ctx, dave, LaunchRequest{Name: "d", Image: "mem", Flavor: "mig-1g", Reservation: b.ID, Queue: true})
	if err != nil {
		t.Fatal(err)
	}
	if pinned.State != models.StateQueued || !strings.Contains(pinned.QueueReason, "waiting for your reservation #") {
		t.Fatalf("dave's launch on the group's booking: %s %q", pinned.State, pinned.QueueReason)
	}
	if err := r.store.RemoveGroupMember(ctx, g.ID, dave.ID); err != nil {
		t.Fatal(err)
	}
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	got := mr.waitState(t, pinned.ID, models.StateRunning, models.StateFailed)
	if got.State != models.StateRunning {
		t.Fatalf("dave's launch after he left the group: %s %q (%s)", got.State, got.QueueReason, got.Reason)
	}
}

// Unused booked time is priced as usage is: cut at the rate change inside
// the window (the part after it at the new rate, never the old) and at
// clock hours, each line rounded by the pricing package. It was one line
// at the rate of the booking's start, cut off to the micro-unit.
func TestMemUnusedReservationSplitAtRateChanges(t *testing.T) {
	t.Parallel()
	r, advance := clockedUnitRig(t)
	ctx := context.Background()
	bob := r.newUser(t, "bob")
	if err := r.store.SetReservationBillUnused(ctx, true); err != nil {
		t.Fatal(err)
	}
	model := r.gpus[0].Model
	start := r.m.now().Truncate(time.Hour).Add(2*time.Hour + 10*time.Minute) // 10 min past an hour
	change := start.Add(20 * time.Minute)
	b, err := r.m.Reserve(ctx, bob, ReserveRequest{Kind: models.UnitMIG, Model: model, Profile: "1g.10gb", Units: 1,
		Start: start, End: start.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	// 1.000001 an instance-hour before the change, 3.000003 after.
	if err := r.store.AddPriceRate(ctx, &models.PriceRate{Resource: pricing.MIG, GPUModel: "1g.10gb", Micros: 1_000_001, CreatedBy: "admin"}); err != nil {
		t.Fatal(err)
	}
	if err := r.store.AddPriceRate(ctx, &models.PriceRate{Resource: pricing.MIG, GPUModel: "1g.10gb", Micros: 3_000_003, EffectiveFrom: change, CreatedBy: "admin"}); err != nil {
		t.Fatal(err)
	}
	advance(start.Add(2 * time.Hour).Sub(r.m.now()))
	if err := r.m.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	lines, err := r.store.Statement(ctx, bob.ID, start.Add(-time.Hour), r.m.now())
	if err != nil {
		t.Fatal(err)
	}
	type piece struct{ secs, rate int64 }
	var got []piece
	var total int64
	for _, l := range lines {
		if l.Resource == models.ResourceReservation {
			got = append(got, piece{l.Seconds, l.RateMicros})
			total += l.AmountMicros
		}
	}
	// 20 min at the old rate, then 30 min to the hour and 10 min after it
	// at the new one.
	want := []piece{{1200, 1_000_001}, {1800, 3_000_003}, {600, 3_000_003}}
	if !slices.Equal(got, want) {
		t.Fatalf("reservation lines (seconds, rate) %v, want %v", got, want)
	}
	exact := pricing.Amount(1_000_001, pricing.MilliUnits, 1200, false) + pricing.Amount(3_000_003, pricing.MilliUnits, 1800, false) +
		pricing.Amount(3_000_003, pricing.MilliUnits, 600, false)
	settled, _ := r.store.ReservationByID(ctx, b.ID)
	if total != exact || settled.BilledMicros != exact {
		t.Fatalf("billed %d (lines) / %d (booking), want %d", total, settled.BilledMicros, exact)
	}
}
