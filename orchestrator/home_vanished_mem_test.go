package orchestrator

import (
	"context"
	"strings"
	"testing"

	"workbench/models"
)

// homeRemovedOutside launches a workbench on the rig, stops it, lets
// metering see its owner's home volume, then removes the container and
// the volume behind the portal's back, as `docker rm` and `docker volume
// rm` do. It returns the workbench.
func homeRemovedOutside(t *testing.T, r *memRig) *models.Workbench {
	return homeRemovedOutsideAfter(t, r, true)
}

// homeRemovedOutsideAfter is homeRemovedOutside with or without a
// metering pass before the removal.
func homeRemovedOutsideAfter(t *testing.T, r *memRig, metered bool) *models.Workbench {
	t.Helper()
	ctx := context.Background()
	wb := launchOnMem(t, r, answersJupyter)
	if got := r.waitState(t, wb.ID, models.StateRunning, models.StateFailed); got.State != models.StateRunning {
		t.Fatalf("launch ended %s: %s", got.State, got.Reason)
	}
	if err := r.m.Stop(ctx, wb.ID, ""); err != nil {
		t.Fatal(err)
	}
	home := r.m.homeVolume("alice")
	if metered {
		r.m.MeterStorage(ctx)
		if !meteredHome(t, r) {
			t.Fatal("metering did not record the home volume")
		}
	}
	if err := r.rt.Remove(ctx, r.m.containerName(wb.ID)); err != nil {
		t.Fatal(err)
	}
	if err := r.rt.RemoveVolume(ctx, home); err != nil {
		t.Fatal(err)
	}
	return wb
}

// meteredHome reports whether alice's home volume has an open storage
// interval.
func meteredHome(t *testing.T, r *memRig) bool {
	t.Helper()
	open, err := r.store.OpenStorageIntervals(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, ok := open[r.m.homeVolume("alice")]
	return ok
}

// homeLostNotices returns the owner's notifications saying the home was
// removed outside the portal.
func homeLostNotices(t *testing.T, r *memRig) []models.Notification {
	t.Helper()
	ns, err := r.store.ListNotifications(context.Background(), r.wb.OwnerID, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []models.Notification
	for _, n := range ns {
		if strings.Contains(n.Message, "removed outside the portal") {
			out = append(out, n)
		}
	}
	return out
}

// A home volume removed behind the portal's back is found by the next
// start, which must make an empty one: its owner is told that files saved
// there are gone (the start made it anew without a word), once.
func TestMemHomeRemovedOutsideIsToldAtTheNextStart(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	wb := homeRemovedOutside(t, r)
	owner, err := r.store.UserByID(ctx, r.wb.OwnerID)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.m.Start(ctx, wb.ID, owner); err != nil {
		t.Fatal(err)
	}
	if got := r.waitState(t, wb.ID, models.StateRunning, models.StateFailed); got.State != models.StateRunning {
		t.Fatalf("start ended %s: %s", got.State, got.Reason)
	}
	told := homeLostNotices(t, r)
	if len(told) != 1 || !strings.Contains(told[0].Message, "workbench "+wb.Name+" started with an empty home") || told[0].Link != "/workbenches/"+wb.ID {
		t.Fatalf("owner told %+v, want one notice naming %s", told, wb.Name)
	}
	// The new volume is metered from now on; nobody is told twice.
	r.m.MeterStorage(ctx)
	if !meteredHome(t, r) {
		t.Error("the new home volume is not metered")
	}
	if n := len(homeLostNotices(t, r)); n != 1 {
		t.Errorf("owner told %d times", n)
	}
}

// Storage metering finds a home volume removed behind the portal's back
// before any start does: the owner is told then (linked to the home page),
// and the start that follows does not tell again.
func TestMemHomeRemovedOutsideIsToldByMetering(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	wb := homeRemovedOutside(t, r)
	r.m.MeterStorage(ctx)
	told := homeLostNotices(t, r)
	if len(told) != 1 || told[0].Link != "/settings/home" || !strings.Contains(told[0].Message, "your next workbench starts with an empty home") {
		t.Fatalf("owner told %+v after metering, want one notice", told)
	}
	owner, err := r.store.UserByID(ctx, r.wb.OwnerID)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.m.Start(ctx, wb.ID, owner); err != nil {
		t.Fatal(err)
	}
	r.waitState(t, wb.ID, models.StateRunning, models.StateFailed)
	if n := len(homeLostNotices(t, r)); n != 1 {
		t.Errorf("owner told %d times", n)
	}
}

// The portal's own removal of a home (the owner's reset), before or after
// metering saw it, is no loss to tell about: neither metering nor the next
// start says so.
func TestMemHomeResetIsNotTakenForARemovalOutside(t *testing.T) {
	t.Parallel()
	for _, metered := range []bool{true, false} {
		t.Run(map[bool]string{true: "metered", false: "not yet metered"}[metered], func(t *testing.T) {
			r := newMemRig(t)
			ctx := context.Background()
			wb := launchOnMem(t, r, answersJupyter)
			r.waitState(t, wb.ID, models.StateRunning)
			if err := r.m.Stop(ctx, wb.ID, ""); err != nil {
				t.Fatal(err)
			}
			if err := r.m.Stop(ctx, r.wb.ID, ""); err != nil {
				t.Fatal(err)
			}
			if metered {
				r.m.MeterStorage(ctx)
			}
			owner, err := r.store.UserByID(ctx, r.wb.OwnerID)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.m.ResetHome(ctx, owner); err != nil {
				t.Fatal(err)
			}
			r.m.MeterStorage(ctx)
			if err := r.m.Start(ctx, wb.ID, owner); err != nil {
				t.Fatal(err)
			}
			r.waitState(t, wb.ID, models.StateRunning)
			if told := homeLostNotices(t, r); len(told) != 0 {
				t.Errorf("owner told %+v after their own reset", told)
			}
		})
	}
}

// A home volume removed behind the portal's back before storage metering
// first measured it (minutes after it was made) is found by the next start
// too: the portal noted that it made it.
func TestMemHomeRemovedOutsideBeforeMeteringIsTold(t *testing.T) {
	t.Parallel()
	r := newMemRig(t)
	ctx := context.Background()
	wb := homeRemovedOutsideAfter(t, r, false)
	owner, err := r.store.UserByID(ctx, r.wb.OwnerID)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.m.Start(ctx, wb.ID, owner); err != nil {
		t.Fatal(err)
	}
	if got := r.waitState(t, wb.ID, models.StateRunning, models.StateFailed); got.State != models.StateRunning {
		t.Fatalf("start ended %s: %s", got.State, got.Reason)
	}
	if told := homeLostNotices(t, r); len(told) != 1 || told[0].Link != "/workbenches/"+wb.ID {
		t.Fatalf("owner told %+v, want one notice", told)
	}
	// Metering's first look at the new volume tells nobody again.
	r.m.MeterStorage(ctx)
	if n := len(homeLostNotices(t, r)); n != 1 {
		t.Errorf("owner told %d times", n)
	}
}
