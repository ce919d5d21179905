package models

import (
	"context"
	"testing"
	"time"
)

// The rollup's energy lands on the usage interval open in its minute, per
// hour; writing a minute again replaces its energy instead of adding it;
// minutes outside every interval of the holder are not booked; statements
// sum it per workbench and user.
func TestGPUMinuteEnergyBookedToInterval(t *testing.T) {
	f := newMoneyFixture(t)
	ctx := context.Background()
	g, err := f.s.CreateGroup(ctx, "vision", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s.AddGroupMember(ctx, g.ID, f.user.ID); err != nil {
		t.Fatal(err)
	}
	start := f.iv.StartedAt // 10:00
	row := func(uuid string, at time.Time, mJ int64) GPUMinute {
		return GPUMinute{GPUUUID: uuid, Minute: at.Unix(), Samples: 4, WorkbenchID: f.wb.ID, EnergyMJ: mJ, GPUModel: "NVIDIA H100 80GB HBM3"}
	}
	rows := []GPUMinute{
		row("GPU-a", start, 10_000_000),
		row("GPU-b", start, 20_000_000),
		row("GPU-a", start.Add(time.Hour), 5_000_000),      // the next hour
		row("GPU-a", start.Add(-2*time.Minute), 7_000_000), // before metering started: not booked
	}
	if err := f.s.SaveGPUMinutes(ctx, rows); err != nil {
		t.Fatal(err)
	}
	// The same minute again with a corrected figure: replaced, not added.
	if err := f.s.SaveGPUMinutes(ctx, []GPUMinute{row("GPU-a", start, 12_000_000)}); err != nil {
		t.Fatal(err)
	}
	got, err := f.s.IntervalEnergyMJ(ctx, f.iv.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(12_000_000 + 20_000_000 + 5_000_000); got != want {
		t.Fatalf("interval energy %d mJ, want %d", got, want)
	}
	byWB, err := f.s.EnergySummary(ctx, start, start.Add(time.Hour), "workbench", 0)
	if err != nil {
		t.Fatal(err)
	}
	// Everyone's workbenches are keyed owner/name, as UsageSummary keys them.
	if byWB["alice/exp"] != 32_000_000 || len(byWB) != 1 {
		t.Errorf("first hour by workbench %v, want alice/exp: 32 000 000 mJ", byWB)
	}
	if own, _ := f.s.EnergySummary(ctx, start, start.Add(time.Hour), "workbench", f.user.ID); own["exp"] != 32_000_000 {
		t.Errorf("the owner's first hour by workbench %v, want exp: 32 000 000 mJ", own)
	}
	byGroup, _ := f.s.EnergySummary(ctx, start, start.Add(2*time.Hour), "group", f.user.ID)
	if byGroup["vision"] != 37_000_000 {
		t.Errorf("by group %v, want vision: 37 000 000", byGroup)
	}
	// Renamed, the group's energy is under its name now (as its money is),
	// not a row of the old name beside the new one.
	if err := f.s.RenameGroup(ctx, g.ID, "perception"); err != nil {
		t.Fatal(err)
	}
	if byGroup, _ := f.s.EnergySummary(ctx, start, start.Add(2*time.Hour), "group", f.user.ID); len(byGroup) != 1 || byGroup["perception"] != 37_000_000 {
		t.Errorf("by group after the rename %v, want perception: 37 000 000", byGroup)
	}
	other, _ := f.s.EnergySummary(ctx, start, start.Add(2*time.Hour), "user", f.user.ID+1)
	if len(other) != 0 {
		t.Errorf("another user's energy: %v", other)
	}
	if _, err := f.s.EnergySummary(ctx, start, start, "colour", 0); err == nil {
		t.Error("a bad grouping was accepted")
	}

	if _, ok, _ := f.s.ElectricityPrice(ctx); ok {
		t.Error("an electricity price before any was set")
	}
	if err := f.s.SetElectricityPrice(ctx, 150_000); err != nil {
		t.Fatal(err)
	}
	if p, ok, _ := f.s.ElectricityPrice(ctx); !ok || p != 150_000 {
		t.Errorf("price %d %v", p, ok)
	}
	_ = f.s.SetElectricityPrice(ctx, -1)
	if _, ok, _ := f.s.ElectricityPrice(ctx); ok {
		t.Error("the price was not cleared")
	}
}
