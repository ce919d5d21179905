package models

import (
	"context"
	"testing"
	"time"
)

// moveClock pins the store's clock at *at (tests move it between steps).
func moveClock(s *Store, at *time.Time) { s.SetClock(func() time.Time { return *at }) }

// A line written with a group id keeps it, even where a live group has
// the name on it: a deleted group's hour goes to the deleted group, not to
// the new group that took its name.
func TestRecordBillingKeepsTheGroupIDItIsGiven(t *testing.T) {
	f := newMoneyFixture(t)
	ctx := context.Background()
	old, _ := f.s.CreateGroup(ctx, "ml101", "")
	if _, err := f.s.DeleteGroup(ctx, old.ID); err != nil {
		t.Fatal(err)
	}
	again, _ := f.s.CreateGroup(ctx, "ml101", "")
	l := f.line(f.iv.StartedAt, 5_000_000)
	l.GroupName, l.GroupID = "ml101", &old.ID
	if _, err := f.s.RecordBilling(ctx, f.iv.ID, []LedgerEntry{l}, f.iv.StartedAt.Add(time.Hour), false); err != nil {
		t.Fatal(err)
	}
	var got int64
	if err := f.s.sql.QueryRow("SELECT group_id FROM ledger_entries").Scan(&got); err != nil || got != old.ID {
		t.Fatalf("the line's group %d (%v), want the deleted group %d, not %d", got, err, old.ID, again.ID)
	}
}

// Energy of an hour is booked to the group its holder was in at the
// hour's start, whenever the rollup writes it: a member moved at 10:30 has
// 10:00–11:00 in the old group and 11:00– in the new; the hour in progress
// when a group is deleted stays the deleted group's.
func TestEnergyFollowsTheGroupOfItsHour(t *testing.T) {
	f := newMoneyFixture(t)
	ctx := context.Background()
	start := f.iv.StartedAt // 10:00
	now := start.Add(-time.Hour)
	moveClock(f.s, &now)
	alpha, _ := f.s.CreateGroup(ctx, "alpha", "")
	beta, _ := f.s.CreateGroup(ctx, "beta", "")
	if err := f.s.AddGroupMember(ctx, alpha.ID, f.user.ID); err != nil {
		t.Fatal(err)
	}
	now = start.Add(30 * time.Minute)
	_ = f.s.RemoveGroupMember(ctx, alpha.ID, f.user.ID)
	_ = f.s.AddGroupMember(ctx, beta.ID, f.user.ID)
	now = start.Add(2*time.Hour + 10*time.Minute)
	if _, err := f.s.DeleteGroup(ctx, beta.ID); err != nil {
		t.Fatal(err)
	}
	now = start.Add(3 * time.Hour) // the rollup writes after all of it
	row := func(at time.Time, mJ int64) GPUMinute {
		return GPUMinute{GPUUUID: "GPU-a", Minute: at.Unix(), Samples: 4, WorkbenchID: f.wb.ID, EnergyMJ: mJ, GPUModel: "NVIDIA H100 80GB HBM3"}
	}
	if err := f.s.SaveGPUMinutes(ctx, []GPUMinute{
		row(start.Add(5*time.Minute), 1_000_000),              // alpha's hour
		row(start.Add(50*time.Minute), 2_000_000),             // moved, but the hour is alpha's
		row(start.Add(time.Hour+5*time.Minute), 4_000_000),    // beta's
		row(start.Add(2*time.Hour+20*time.Minute), 8_000_000), // the hour beta was deleted in
	}); err != nil {
		t.Fatal(err)
	}
	byGroup, err := f.s.EnergySummary(ctx, start, start.Add(3*time.Hour), "group", 0)
	if err != nil {
		t.Fatal(err)
	}
	deleted := DeletedGroupKey("beta", beta.ID)
	if len(byGroup) != 2 || byGroup["alpha"] != 3_000_000 || byGroup[deleted] != 12_000_000 {
		t.Errorf("energy by group %v, want alpha 3 000 000 and %s 12 000 000", byGroup, deleted)
	}
}

// A personal booking's unused time goes to the group its booker was in
// during it, split at a move, whenever it is settled (it all went to the
// booker's group at the settlement); a group booking's to its group.
func TestSettledBookingFollowsItsBookersGroup(t *testing.T) {
	f := newMoneyFixture(t)
	ctx := context.Background()
	start := f.iv.StartedAt // 10:00
	now := start.Add(-time.Hour)
	moveClock(f.s, &now)
	alpha, _ := f.s.CreateGroup(ctx, "alpha", "")
	beta, _ := f.s.CreateGroup(ctx, "beta", "")
	_ = f.s.AddGroupMember(ctx, alpha.ID, f.user.ID)
	now = start.Add(15 * time.Minute)
	_ = f.s.RemoveGroupMember(ctx, alpha.ID, f.user.ID)
	_ = f.s.AddGroupMember(ctx, beta.ID, f.user.ID)
	now = start.Add(2 * time.Hour)
	r := &Reservation{UserID: f.user.ID, GPUModel: "NVIDIA H100 80GB HBM3", UnitKind: "gpu", Units: 1, StartsAt: start, EndsAt: start.Add(time.Hour),
		CreatedBy: "alice", CreatedAt: start.Add(-time.Hour)}
	if err := f.s.db.Create(r).Error; err != nil {
		t.Fatal(err)
	}
	line := LedgerEntry{UserID: f.user.ID, Resource: ResourceReservation, GPUModel: r.GPUModel, PeriodStart: start, PeriodEnd: start.Add(time.Hour),
		Seconds: 3600, QuantityMilli: 1000, RateMicros: 4_000_001, AmountMicros: 4_000_001, Note: "reserved but unused"}
	if err := f.s.SettleReservation(ctx, r.ID, 0, 3600, []LedgerEntry{line}); err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		GroupID *int64
		Seconds int64
		Amount  int64 `gorm:"column:amount_micros"`
	}
	if err := f.s.db.Raw("SELECT group_id, seconds, amount_micros FROM ledger_entries ORDER BY period_start").Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].GroupID == nil || *rows[0].GroupID != alpha.ID || rows[0].Seconds != 900 || rows[1].GroupID == nil || *rows[1].GroupID != beta.ID ||
		rows[1].Seconds != 2700 || rows[0].Amount+rows[1].Amount != 4_000_001 || rows[0].Amount != 1_000_000 {
		t.Errorf("the booking's lines: %+v", rows)
	}
}

// What a group booking's members used of it counts each member's runs
// only while they were in the group: alice, who left at 10:30, for her
// run until then; bob, who joined at 11:00, from then (it counted none of
// alice's and all of bob's: the members at the settlement). A personal
// booking counts its booker's runs.
func TestGroupBookingCountsMembersWhileMembers(t *testing.T) {
	f := newMoneyFixture(t)
	ctx := context.Background()
	start := f.iv.StartedAt // 10:00, alice's run
	now := start.Add(-time.Hour)
	moveClock(f.s, &now)
	lab, _ := f.s.CreateGroup(ctx, "lab", "")
	_ = f.s.AddGroupMember(ctx, lab.ID, f.user.ID)
	bob, err := f.s.CreateUser(ctx, NewUser{Username: "bob", Password: "bob-password-1"})
	if err != nil {
		t.Fatal(err)
	}
	wb := &Workbench{Name: "b", OwnerID: bob.ID, ImageID: f.wb.ImageID, FlavorID: f.wb.FlavorID, Token: "t"}
	if err := f.s.CreateWorkbench(ctx, wb, GPUNeed{}, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.s.OpenInterval(ctx, &UsageInterval{WorkbenchID: wb.ID, UserID: bob.ID, GPUModel: f.iv.GPUModel, GPUCount: 1, CPUMilli: 1000, MemoryMiB: 1024,
		StartedAt: start.Add(45 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	now = start.Add(30 * time.Minute)
	_ = f.s.RemoveGroupMember(ctx, lab.ID, f.user.ID)
	now = start.Add(time.Hour)
	_ = f.s.AddGroupMember(ctx, lab.ID, bob.ID)
	_ = f.s.CloseInterval(ctx, f.wb.ID, start.Add(time.Hour), "stopped")
	_ = f.s.CloseInterval(ctx, wb.ID, start.Add(90*time.Minute), "stopped")
	r := &Reservation{UserID: bob.ID, GroupID: &lab.ID, GPUModel: f.iv.GPUModel, UnitKind: UnitGPU, Units: 1, StartsAt: start, EndsAt: start.Add(2 * time.Hour)}
	spans, err := f.s.BookingSpansOf(ctx, r, UnitGPU, r.GPUModel, "", r.StartsAt, r.EndsAt)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64][2]time.Time{}
	for _, s := range spans {
		got[s.UserID] = [2]time.Time{s.Start, *s.End}
		if !s.Clipped {
			t.Errorf("span of %d not marked clipped", s.UserID)
		}
	}
	if len(spans) != 2 || got[f.user.ID] != [2]time.Time{start, start.Add(30 * time.Minute)} || got[bob.ID] != [2]time.Time{start.Add(time.Hour), start.Add(90 * time.Minute)} {
		t.Errorf("the group booking's spans: %+v", spans)
	}
	r.GroupID = nil
	if own, err := f.s.BookingSpansOf(ctx, r, UnitGPU, r.GPUModel, "", r.StartsAt, r.EndsAt); err != nil || len(own) != 1 || own[0].UserID != bob.ID || own[0].Clipped ||
		!own[0].Start.Equal(start.Add(45*time.Minute)) {
		t.Errorf("a personal booking's spans: %+v %v", own, err)
	}
}
