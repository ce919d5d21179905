package orchestrator

import (
	"testing"
	"time"
	"workbench/models/pricing"
)

// A group deleted at 10:20 while its member's run and home volume were
// being metered: the hour billed before (09:00–10:00) stays its own, and
// the hour in progress, billed after the deletion, is split at it — its
// part up to 10:20 the deleted group's, the rest no group's (all of it
// read "no group"). Home storage since its last bill goes the same way.
func TestBillingSplitsTheHourAGroupWasDeletedIn(t *testing.T) {
	f := newBillFixture(t)
	b := NewBilling(f.store, 60*time.Second)
	stamp := at("08:00:00")
	f.store.SetClock(func() time.Time { return stamp })
	g, err := f.store.CreateGroup(f.ctx, "ml101", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.store.AddGroupMember(f.ctx, g.ID, f.user.ID); err != nil {
		t.Fatal(err)
	}
	wb := f.open(at("09:00:00"))
	vol := "home-alice"
	if err := f.store.RecordVolume(f.ctx, f.user.ID, vol, 10_000, at("09:00:00"), at("09:00:00"), 100_000); err != nil {
		t.Fatal(err)
	}
	f.bill(b, at("10:05:00"))
	stamp = at("10:20:00")
	if _, err := f.store.DeleteGroup(f.ctx, g.ID); err != nil {
		t.Fatal(err)
	}
	f.close(wb, at("10:50:00"))
	if err := f.store.RemovedHome(f.ctx, f.user.ID, vol, at("10:50:00")); err != nil {
		t.Fatal(err)
	}
	f.bill(b, at("11:05:00"))

	var inGroup, none, afterSecs int64
	for _, l := range f.statement(at("00:00:00"), at("23:00:00")) {
		switch {
		case l.PeriodStart.Before(at("10:20:00")):
			if l.GroupID == nil || *l.GroupID != g.ID || l.GroupName != "ml101" || l.PeriodEnd.After(at("10:20:00")) {
				t.Errorf("%s line %s–%s: group %v %q, want the deleted group %d", l.Resource, l.PeriodStart.Format(time.TimeOnly),
					l.PeriodEnd.Format(time.TimeOnly), l.GroupID, l.GroupName, g.ID)
			}
			if !l.PeriodStart.Before(at("10:00:00")) {
				inGroup += l.AmountMicros
			}
		default:
			if l.GroupID != nil || l.GroupName != "" {
				t.Errorf("%s line %s–%s after the deletion: group %v %q, want none", l.Resource, l.PeriodStart.Format(time.TimeOnly),
					l.PeriodEnd.Format(time.TimeOnly), l.GroupID, l.GroupName)
			}
			none += l.AmountMicros
			if l.Resource == pricing.GPU {
				afterSecs += l.Seconds
			}
		}
	}
	if afterSecs != 30*60 || none <= 0 || inGroup <= 0 {
		t.Errorf("after the deletion: %d GPU-s, %d; the deleted group's part of the hour %d", afterSecs, none, inGroup)
	}
	// Split, the hour's lines add up to what it was priced at whole.
	want := pricing.Amount(h100Rate, 2000, 3600, false) + pricing.Amount(h100Rate, 2000, 50*60, false)
	var gpu int64
	for _, l := range f.statement(at("00:00:00"), at("23:00:00")) {
		if l.Resource == pricing.GPU {
			gpu += l.AmountMicros
		}
	}
	if gpu != want {
		t.Errorf("GPU lines add up to %d, want %d", gpu, want)
	}
}
