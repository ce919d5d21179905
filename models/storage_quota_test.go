package models

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The storage limit resolves like the other limits: the user's own value,
// else the most generous among the groups that set one, else the default;
// it is stored and read back, and negative or huge values are refused.
func TestStorageQuotaResolvesAndValidates(t *testing.T) {
	f := newMoneyFixture(t)
	ctx := context.Background()
	s := f.s
	ml, _ := s.CreateGroup(ctx, "ml", "")
	vis, _ := s.CreateGroup(ctx, "vision", "")
	for _, g := range []int64{ml.ID, vis.ID} {
		if err := s.AddGroupMember(ctx, g, f.user.ID); err != nil {
			t.Fatal(err)
		}
	}
	// storage is the effective limit, -1 for unlimited.
	storage := func() int64 {
		t.Helper()
		l, err := s.EffectiveQuota(ctx, f.user.ID)
		if err != nil {
			t.Fatal(err)
		}
		if l.MaxStorageGiB == nil {
			return -1
		}
		return *l.MaxStorageGiB
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.SetQuota(ctx, ScopeDefault, 0, Limits{MaxStorageGiB: i64(10)}, "admin"))
	if got := storage(); got != 10 {
		t.Fatalf("default only: %v, want 10", got)
	}
	// vision sets nothing for storage: it takes no part.
	must(s.SetQuota(ctx, ScopeGroup, ml.ID, Limits{MaxStorageGiB: i64(50)}, "admin"))
	must(s.SetQuota(ctx, ScopeGroup, vis.ID, Limits{MaxGPUs: i64(1)}, "admin"))
	if got := storage(); got != 50 {
		t.Fatalf("ml 50, vision unset, default 10: %v, want 50", got)
	}
	must(s.SetQuota(ctx, ScopeGroup, vis.ID, Limits{MaxStorageGiB: i64(200)}, "admin"))
	if got := storage(); got != 200 {
		t.Fatalf("ml 50, vision 200: %v, want the most generous, 200", got)
	}
	must(s.SetQuota(ctx, ScopeUser, f.user.ID, Limits{MaxStorageGiB: i64(5)}, "admin"))
	if got := storage(); got != 5 {
		t.Fatalf("own 5: %v, want 5", got)
	}
	if own, _, err := s.Quota(ctx, ScopeUser, f.user.ID); err != nil || own.MaxStorageGiB == nil || *own.MaxStorageGiB != 5 {
		t.Fatalf("stored own quota: %+v, %v", own, err)
	}
	if l := ResolveLimits(Limits{}, nil, nil); l.MaxStorageGiB != nil {
		t.Fatalf("nothing set: %d, want unlimited", *l.MaxStorageGiB)
	}

	var ve *ValidationError
	for _, bad := range []int64{-1, MaxQuotaNumber + 1} {
		err := s.SetQuota(ctx, ScopeUser, f.user.ID, Limits{MaxStorageGiB: i64(bad)}, "admin")
		if !errors.As(err, &ve) || ve.Field != "max_storage_gib" {
			t.Errorf("a storage limit of %d: %v, want invalid max_storage_gib", bad, err)
		}
	}
}

// A launch with GPUs is refused while the user's home volumes, as last
// metered, hold more than the limit; exactly at it, or once the home's
// interval is closed (its data deleted), it goes.
func TestCheckLaunchQuotaRefusesOverStorage(t *testing.T) {
	f := newMoneyFixture(t)
	ctx := context.Background()
	if err := f.s.SetQuota(ctx, ScopeUser, f.user.ID, Limits{MaxStorageGiB: i64(2)}, "admin"); err != nil {
		t.Fatal(err)
	}
	launch := func(name string) error {
		wb := &Workbench{Name: name, OwnerID: f.user.ID, ImageID: f.wb.ImageID, FlavorID: f.wb.FlavorID, Token: "t"}
		return f.s.CreateWorkbench(ctx, wb, GPUNeed{}, CheckLaunchQuota(LaunchAsk{UserID: f.user.ID, Image: "Test", Flavor: "1x H100",
			GPUModel: "NVIDIA H100 80GB HBM3", GPUs: 1}, MonthUsage{}))
	}
	at := time.Date(2030, 3, 10, 10, 0, 0, 0, time.UTC)
	if err := f.s.RecordVolume(ctx, f.user.ID, "wb-home-x-alice", 2000, at, time.Time{}, 97); err != nil {
		t.Fatal(err)
	}
	if err := launch("at-limit"); err != nil {
		t.Fatalf("2.00 GiB of 2: %v, want launched", err)
	}
	if err := f.s.RecordVolume(ctx, f.user.ID, "wb-home-x-alice", 2500, at.Add(time.Hour), time.Time{}, 97); err != nil {
		t.Fatal(err)
	}
	err := launch("over")
	var qe *QuotaError
	if !errors.As(err, &qe) || qe.Limit != "max_storage_gib" || !strings.Contains(qe.Message, "holds 2.50 GiB, 0.50 GiB over your limit of 2 GiB") {
		t.Fatalf("2.50 GiB of 2: %v, want refused (max_storage_gib)", err)
	}
	if WaitableQuota(err) {
		t.Error("a storage refusal is waitable: a queued launch would wait for its owner's other workbenches to stop")
	}
	if err := f.s.RemovedHome(ctx, f.user.ID, "wb-home-x-alice", at.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := launch("after-delete"); err != nil {
		t.Fatalf("home deleted: %v, want launched", err)
	}
}

// Over the storage limit a start without GPU goes, so that the user can
// open the home (one volume for all their workbenches) and delete files;
// its other limits still bind (the budget). A start with GPUs is refused
// naming the way out: the workbench's CPU-only twin, else a flavor without
// GPU the quota allows (the asked flavor's twin first), else none, and an
// administrator is to be asked.
func TestCheckLaunchQuotaOverStorageLetsStartsWithoutGPU(t *testing.T) {
	f := newMoneyFixture(t)
	ctx := context.Background()
	if err := f.s.SetQuota(ctx, ScopeUser, f.user.ID, Limits{MaxStorageGiB: i64(2)}, "admin"); err != nil {
		t.Fatal(err)
	}
	if err := f.s.RecordVolume(ctx, f.user.ID, "wb-home-x-alice", 2500, time.Date(2030, 3, 10, 10, 0, 0, 0, time.UTC), time.Time{}, 97); err != nil {
		t.Fatal(err)
	}
	n := 0
	check := func(ask LaunchAsk, month MonthUsage) error {
		n++
		ask.UserID, ask.Image = f.user.ID, "Test"
		wb := &Workbench{Name: fmt.Sprintf("wb%d", n), OwnerID: f.user.ID, ImageID: f.wb.ImageID, FlavorID: f.wb.FlavorID, Token: "t"}
		return f.s.CreateWorkbench(ctx, wb, GPUNeed{}, CheckLaunchQuota(ask, month))
	}
	gpu := LaunchAsk{Flavor: "1x H100", GPUModel: "NVIDIA H100 80GB HBM3", GPUs: 1}
	start := gpu
	start.Start = true
	refused := func(what string, ask LaunchAsk, way, cpu, says string) {
		t.Helper()
		var qe *QuotaError
		err := check(ask, MonthUsage{})
		if !errors.As(err, &qe) || qe.Limit != "max_storage_gib" || qe.WayOut != way || qe.CPUFlavor != cpu ||
			!strings.Contains(qe.Message, "holds 2.50 GiB, 0.50 GiB over your limit of 2 GiB") || !strings.Contains(qe.Message, says) {
			t.Fatalf("%s: %v (%+v), want refused for storage, way out %q %q, saying %q", what, err, qe, way, cpu, says)
		}
	}
	refused("a GPU launch, no flavor without GPU in the catalog", gpu, WayOutAskAdmin, "", "no flavor without GPU is open to you")

	if err := check(LaunchAsk{Flavor: "cpu small"}, MonthUsage{}); err != nil {
		t.Fatalf("a launch without GPU over the storage limit: %v, want it to go", err)
	}
	small := &Flavor{Name: "cpu small", CPUMilli: 2000, MemoryMiB: 4096, Enabled: true}
	if err := f.s.CreateFlavor(ctx, small); err != nil {
		t.Fatal(err)
	}
	refused("a GPU launch", gpu, WayOutLaunchWithoutGPU, "cpu small", "launch one of flavor cpu small")
	refused("a GPU start without a twin", start, WayOutLaunchWithoutGPU, "cpu small", "launch one of flavor cpu small")

	// The quota allows no flavor without GPU: none to offer.
	if err := f.s.SetQuota(ctx, ScopeUser, f.user.ID, Limits{MaxStorageGiB: i64(2), AllowedFlavors: []string{"1x H100"}}, "admin"); err != nil {
		t.Fatal(err)
	}
	refused("a GPU launch, cpu small not allowed", gpu, WayOutAskAdmin, "", "ask an administrator")
	if err := f.s.SetQuota(ctx, ScopeUser, f.user.ID, Limits{MaxStorageGiB: i64(2)}, "admin"); err != nil {
		t.Fatal(err)
	}

	twin := &Flavor{Name: "cpu twin", CPUMilli: 8000, MemoryMiB: 8192, Enabled: true}
	if err := f.s.CreateFlavor(ctx, twin); err != nil {
		t.Fatal(err)
	}
	h100, err := f.s.FlavorByNameOrID(ctx, "1x H100")
	if err != nil {
		t.Fatal(err)
	}
	h100.CPUTwinID = twin.ID
	if err := f.s.UpdateFlavor(ctx, h100); err != nil {
		t.Fatal(err)
	}
	refused("a GPU start with a twin", start, WayOutStartWithoutGPU, "cpu twin", "start this one without GPU")
	refused("a GPU launch of a flavor with a twin", gpu, WayOutLaunchWithoutGPU, "cpu twin", "launch one of flavor cpu twin")
	twin.Enabled = false
	if err := f.s.UpdateFlavor(ctx, twin); err != nil {
		t.Fatal(err)
	}
	refused("a GPU start, its twin disabled", start, WayOutLaunchWithoutGPU, "cpu small", "launch one of flavor cpu small")

	// The start without GPU still answers to the budget.
	if err := f.s.SetQuota(ctx, ScopeUser, f.user.ID, Limits{MaxStorageGiB: i64(2), BudgetPerMonthMicros: i64(1_000_000)}, "admin"); err != nil {
		t.Fatal(err)
	}
	var qe *QuotaError
	if err := check(LaunchAsk{Flavor: "cpu small"}, MonthUsage{AmountMicros: 1_000_000}); !errors.As(err, &qe) || qe.Limit != "budget_per_month_micros" {
		t.Fatalf("a launch without GPU, budget used up: %v, want refused by the budget", err)
	}
	if qe, err := f.s.StorageRefusal(ctx, LaunchAsk{UserID: f.user.ID, Flavor: "1x H100", GPUs: 1, Start: true}, true); err != nil || qe == nil || qe.WayOut != WayOutDeleteFiles {
		t.Fatalf("StorageRefusal of a running CPU-only workbench: %+v, %v; want delete_files", qe, err)
	}
}

// The "over" mark is set by one caller per crossing and cleared when the
// user is back under.
func TestMarkStorageOverOncePerCrossing(t *testing.T) {
	f := newMoneyFixture(t)
	ctx := context.Background()
	now := time.Date(2030, 3, 10, 10, 0, 0, 0, time.UTC)
	if err := f.s.SetQuota(ctx, ScopeDefault, 0, Limits{MaxStorageGiB: i64(1)}, "admin"); err != nil {
		t.Fatal(err)
	}
	if err := f.s.RecordVolume(ctx, f.user.ID, "wb-home-x-alice", 1500, now, time.Time{}, 97); err != nil {
		t.Fatal(err)
	}
	states, err := f.s.StorageQuotaStates(ctx)
	if err != nil || len(states) != 1 || states[0].UsedMilliGiB != 1500 || !StorageOver(states[0].Limits, 1500) || states[0].Told {
		t.Fatalf("states: %+v, %v; want alice at 1500 milli-GiB, over, not told", states, err)
	}
	for i, want := range []bool{true, false} {
		if crossed, err := f.s.MarkStorageOver(ctx, f.user.ID, true, now); err != nil || crossed != want {
			t.Fatalf("mark %d: %v, %v; want %v", i, crossed, err, want)
		}
	}
	if _, err := f.s.MarkStorageOver(ctx, f.user.ID, false, now); err != nil {
		t.Fatal(err)
	}
	if crossed, _ := f.s.MarkStorageOver(ctx, f.user.ID, true, now); !crossed {
		t.Fatal("a second crossing after going back under was not reported")
	}
}

// With no storage limit anywhere, a metering pass reads only the standing
// "told" marks (to clear them), not every user with a home volume.
func TestStorageQuotaStatesWithoutALimitReadOnlyMarks(t *testing.T) {
	f := newMoneyFixture(t)
	ctx := context.Background()
	now := time.Date(2030, 3, 10, 10, 0, 0, 0, time.UTC)
	if err := f.s.RecordVolume(ctx, f.user.ID, "wb-home-x-alice", 1500, now, time.Time{}, 97); err != nil {
		t.Fatal(err)
	}
	if states, err := f.s.StorageQuotaStates(ctx); err != nil || len(states) != 0 {
		t.Fatalf("states with no limit set: %+v, %v; want none", states, err)
	}
	if _, err := f.s.MarkStorageOver(ctx, f.user.ID, true, now); err != nil {
		t.Fatal(err)
	}
	states, err := f.s.StorageQuotaStates(ctx)
	if err != nil || len(states) != 1 || !states[0].Told || StorageOver(states[0].Limits, states[0].UsedMilliGiB) {
		t.Fatalf("states with a mark left from a removed limit: %+v, %v; want alice, told, not over", states, err)
	}
}
