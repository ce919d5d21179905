package orchestrator

import (
	"testing"
	"time"
)

// A group's statement counts as accruing what its members ran while in it
// and no line holds yet — a member who left counts for the time before —
// and the next pass writes exactly that to the group: ada, moved from
// alpha to beta at 10:20, stopped at 10:50; before the pass alpha is owed
// 10:00–10:20 and beta 10:20–10:50 (alpha was owed nothing: she is not its
// member now, and beta all of it).
func TestGroupAccruingIsWhatThePassBillsToIt(t *testing.T) {
	f := newBillFixture(t)
	b := NewBilling(f.store, 60*time.Second)
	stamp := at("08:00:00")
	f.store.SetClock(func() time.Time { return stamp })
	alpha, _ := f.store.CreateGroup(f.ctx, "alpha", "")
	beta, _ := f.store.CreateGroup(f.ctx, "beta", "")
	if err := f.store.AddGroupMember(f.ctx, alpha.ID, f.user.ID); err != nil {
		t.Fatal(err)
	}
	wb := f.open(at("09:00:00"))
	f.bill(b, at("10:05:00"))
	stamp = at("10:20:00")
	if err := f.store.RemoveGroupMember(f.ctx, alpha.ID, f.user.ID); err != nil {
		t.Fatal(err)
	}
	if err := f.store.AddGroupMember(f.ctx, beta.ID, f.user.ID); err != nil {
		t.Fatal(err)
	}
	f.close(wb, at("10:50:00"))
	b.now = func() time.Time { return at("10:55:00") }
	accruing := map[int64]int64{}
	for _, g := range []int64{alpha.ID, beta.ID} {
		ids, err := f.store.GroupMembersSince(f.ctx, g, billDay)
		if err != nil || len(ids) != 1 || ids[0] != f.user.ID {
			t.Fatalf("group %d's members today: %v %v", g, ids, err)
		}
		if accruing[g], err = b.AccruingForGroup(f.ctx, g, ids); err != nil {
			t.Fatal(err)
		}
	}
	f.bill(b, at("11:05:00"))
	billed := map[int64]int64{}
	for _, l := range f.statement(at("10:00:00"), at("23:00:00")) {
		if l.GroupID == nil {
			t.Fatalf("a line of no group: %+v", l)
		}
		billed[*l.GroupID] += l.AmountMicros
	}
	if accruing[alpha.ID] <= 0 || accruing[beta.ID] <= 0 || accruing[alpha.ID] != billed[alpha.ID] || accruing[beta.ID] != billed[beta.ID] {
		t.Errorf("accruing %v before the pass, billed %v by it", accruing, billed)
	}
}
