package orchestrator

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"workbench/models"
)

// In memory, with a real SQLite file: over her storage quota as last
// metered, alice's launch and her start of a stopped workbench with GPUs
// are refused
// (quota_exceeded, max_storage_gib); her running workbench keeps running;
// she is told once per crossing; deleting a workbench's data lets her
// launch again at once, before any metering.
func TestMemStorageQuotaRefusesLaunchAndStart(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	alice, err := r.store.UserByID(ctx, r.wb.OwnerID)
	if err != nil {
		t.Fatal(err)
	}
	second := launchOnMem(t, r, answersJupyter) // makes alice's home volume
	if got := r.waitState(t, second.ID, models.StateRunning, models.StateFailed); got.State != models.StateRunning {
		t.Fatalf("launch ended %s: %s", got.State, got.Reason)
	}
	if err := r.m.Stop(ctx, second.ID, ""); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, second.ID, models.StateStopped)
	one := int64(1)
	if err := r.store.SetQuota(ctx, models.ScopeUser, alice.ID, models.Limits{MaxStorageGiB: &one}, "admin"); err != nil {
		t.Fatal(err)
	}
	home := r.m.homeVolume(alice.HomeName())
	r.rt.SetVolumeSize(home, 3<<30)
	r.m.MeterStorage(ctx)

	fl, err := r.store.FlavorByID(ctx, r.wb.FlavorID)
	if err != nil {
		t.Fatal(err)
	}
	refusedForStorage := func(what string, err error) {
		t.Helper()
		var re *RefusedError
		if !errors.As(err, &re) || re.Code != "quota_exceeded" || re.Limit != "max_storage_gib" ||
			!strings.Contains(re.Message, "your home storage holds 3.00 GiB, 2.00 GiB over your limit of 1 GiB") {
			t.Fatalf("%s with 3 GiB of a 1 GiB quota: %v, want refused (quota_exceeded, max_storage_gib)", what, err)
		}
	}
	_, err = r.m.Launch(ctx, alice, LaunchRequest{Name: "third", Image: "mem", Flavor: fl.Name})
	refusedForStorage("a launch", err)
	_, err = r.m.Launch(ctx, alice, LaunchRequest{Name: "queued", Image: "mem", Flavor: fl.Name, Queue: true})
	refusedForStorage("a queued launch", err)
	refusedForStorage("a start", r.m.Start(ctx, second.ID, alice))
	if got, _ := r.store.WorkbenchByID(ctx, second.ID); got.State != models.StateStopped {
		t.Fatalf("the refused start left it %s, want stopped", got.State)
	}

	// Running work is not stopped, and a second metering tells nothing new.
	r.m.MeterStorage(ctx)
	if got, _ := r.store.WorkbenchByID(ctx, r.wb.ID); got.State != models.StateRunning {
		t.Fatalf("the running workbench is %s over the storage quota, want running", got.State)
	}
	told := func() int {
		t.Helper()
		ns, err := r.store.ListNotifications(ctx, alice.ID, 100)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, x := range ns {
			if strings.Contains(x.Message, "Your home storage holds") {
				n++
			}
		}
		return n
	}
	if n := told(); n != 1 {
		t.Fatalf("alice was told %d times of one crossing, want once", n)
	}
	// Back under, then over again: a second crossing, told again.
	r.rt.SetVolumeSize(home, 100<<20)
	r.m.MeterStorage(ctx)
	r.rt.SetVolumeSize(home, 2<<30)
	r.m.MeterStorage(ctx)
	if n := told(); n != 2 {
		t.Fatalf("after going back under and over again alice was told %d times, want 2", n)
	}

	// Deleting the data: the home goes with the last workbench that uses it.
	// A couple of seconds on: the resize above opened the volume's new
	// interval at the next whole second, and a removal before an
	// interval's start leaves it open (RemovedHome).
	r.m.SetClock(func() time.Time { return time.Now().Add(2 * time.Second) })
	if err := r.m.Stop(ctx, r.wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, r.wb.ID, models.StateStopped)
	if err := r.m.Delete(ctx, r.wb.ID, alice, false); err != nil {
		t.Fatal(err)
	}
	if err := r.m.Delete(ctx, second.ID, alice, true); err != nil {
		t.Fatal(err)
	}
	if r.rt.HasVolume(home) {
		t.Fatal("the home volume is still there after deleting the data")
	}
	fresh, err := r.m.Launch(ctx, alice, LaunchRequest{Name: "fresh", Image: "mem", Flavor: fl.Name})
	if err != nil {
		t.Fatalf("a launch after deleting the data: %v, want launched", err)
	}
	r.waitState(t, fresh.ID, models.StateRunning, models.StateFailed) // its pipeline done before the rig's Jupyter goes
}

// In memory, with a real SQLite file: over her storage quota, alice's
// start of her stopped GPU workbench is refused naming the way out (a
// flavor without GPU to launch; once the admin names a CPU-only twin,
// "start without GPU" as it); the start without GPU goes, so she reaches
// her home; "Restart with GPUs" is refused before it stops that run; a
// launch of the flavor without GPU goes too.
func TestMemStorageOverStartWithoutGPUIsTheWayOut(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	alice, err := r.store.UserByID(ctx, r.wb.OwnerID)
	if err != nil {
		t.Fatal(err)
	}
	wb := launchOnMem(t, r, answersJupyter)
	if got := r.waitState(t, wb.ID, models.StateRunning, models.StateFailed); got.State != models.StateRunning {
		t.Fatalf("launch ended %s: %s", got.State, got.Reason)
	}
	if err := r.m.Stop(ctx, wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, wb.ID, models.StateStopped)
	one := int64(1)
	if err := r.store.SetQuota(ctx, models.ScopeUser, alice.ID, models.Limits{MaxStorageGiB: &one}, "admin"); err != nil {
		t.Fatal(err)
	}
	r.rt.SetVolumeSize(r.m.homeVolume(alice.HomeName()), 3<<30)
	r.m.MeterStorage(ctx)

	refused := func(what string, err error, way, cpu, says string) {
		t.Helper()
		var re *RefusedError
		if !errors.As(err, &re) || re.Code != "quota_exceeded" || re.Limit != "max_storage_gib" || re.WayOut != way || re.CPUFlavor != cpu ||
			!strings.Contains(re.Message, "3.00 GiB, 2.00 GiB over your limit of 1 GiB") || !strings.Contains(re.Message, says) {
			t.Fatalf("%s: %v (%+v), want refused for storage with way out %q %q, saying %q", what, err, re, way, cpu, says)
		}
	}
	refused("a start with GPUs, no twin", r.m.Start(ctx, wb.ID, alice), models.WayOutLaunchWithoutGPU, "CPU small", "launch one of flavor CPU small")

	fl, err := r.store.FlavorByID(ctx, r.wb.FlavorID)
	if err != nil {
		t.Fatal(err)
	}
	small, err := r.store.FlavorByNameOrID(ctx, "CPU small")
	if err != nil {
		t.Fatal(err)
	}
	fl.CPUTwinID = small.ID
	if err := r.store.UpdateFlavor(ctx, fl); err != nil {
		t.Fatal(err)
	}
	refused("a start with GPUs", r.m.Start(ctx, wb.ID, alice), models.WayOutStartWithoutGPU, "CPU small", "start this one without GPU")

	if err := r.m.StartAs(ctx, wb.ID, alice, StartOptions{CPUOnly: true}); err != nil {
		t.Fatalf("a start without GPU over the storage limit: %v, want it to go", err)
	}
	if got := r.waitState(t, wb.ID, models.StateRunning, models.StateFailed); got.State != models.StateRunning || !got.CPUOnly() || len(got.GPUs) != 0 {
		t.Fatalf("the start without GPU: %s (%s), CPU-only %v, GPUs %v", got.State, got.Reason, got.CPUOnly(), got.GPUs)
	}
	refused("Restart with GPUs", r.m.RestartWithGPUs(ctx, wb.ID, alice), models.WayOutDeleteFiles, "", "keep working in this one without GPU")
	if got, _ := r.store.WorkbenchByID(ctx, wb.ID); got.State != models.StateRunning || !got.CPUOnly() {
		t.Fatalf("the refused restart left it %s (CPU-only %v), want the CPU-only run kept", got.State, got.CPUOnly())
	}

	cpu, err := r.m.Launch(ctx, alice, LaunchRequest{Name: "cleanup", Image: "mem", Flavor: "CPU small"})
	if err != nil {
		t.Fatalf("a launch without GPU over the storage limit: %v, want it to go", err)
	}
	if got := r.waitState(t, cpu.ID, models.StateRunning, models.StateFailed); got.State != models.StateRunning {
		t.Fatalf("the launch without GPU ended %s: %s", got.State, got.Reason)
	}
}
