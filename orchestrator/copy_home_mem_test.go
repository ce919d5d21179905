package orchestrator

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"workbench/models"
)

// A restored copy of an install started with --new-identity has the
// original's records of its owners' home volumes: storage intervals under
// the original's install id, and the mark of a home the original made. The
// copy never sees those volumes (it lists its own id's), but their files
// are with the original: neither its storage metering nor its first start
// of a workbench (which makes the copy's own, empty home) may tell the
// owner "your home volume was removed outside the portal… files are gone".
// The original's intervals are closed at their last sighting with a line
// at INFO naming the copy; the copy's own volume is metered as usual.
func TestMemNewIdentityDoesNotTellOwnersTheirHomeIsGone(t *testing.T) {
	t.Parallel()
	for _, meterFirst := range []bool{true, false} {
		t.Run(map[bool]string{true: "metering first", false: "start first"}[meterFirst], func(t *testing.T) {
			t.Parallel()
			r := newMemRig(t)
			ctx := context.Background()
			wb := launchOnMem(t, r, answersJupyter)
			if got := r.waitState(t, wb.ID, models.StateRunning, models.StateFailed); got.State != models.StateRunning {
				t.Fatalf("launch ended %s: %s", got.State, got.Reason)
			}
			for _, id := range []string{wb.ID, r.wb.ID} {
				if err := r.m.Stop(ctx, id, ""); err != nil {
					t.Fatal(err)
				}
			}
			r.m.MeterStorage(ctx)
			original := r.m.homeVolume("alice")
			if !meteredHome(t, r) {
				t.Fatal("the original's metering did not record the home volume")
			}

			id, err := r.store.NewInstallID(ctx)
			if err != nil {
				t.Fatal(err)
			}
			logs := &lockedLog{}
			clone := NewManager(r.store, r.m.pool, r.rt, id, Options{}, slog.New(slog.NewTextHandler(logs, nil)))
			t.Cleanup(clone.Wait)
			owner, err := r.store.UserByID(ctx, r.wb.OwnerID)
			if err != nil {
				t.Fatal(err)
			}
			start := func() {
				if err := clone.Start(ctx, wb.ID, owner); err != nil {
					t.Fatal(err)
				}
				if got := r.waitState(t, wb.ID, models.StateRunning, models.StateFailed); got.State != models.StateRunning {
					t.Fatalf("start in the copy ended %s: %s", got.State, got.Reason)
				}
			}
			if meterFirst {
				clone.MeterStorage(ctx)
				start()
			} else {
				start()
				clone.MeterStorage(ctx)
			}
			clone.MeterStorage(ctx)

			if told := homeLostNotices(t, r); len(told) != 0 {
				t.Errorf("owner told %+v by the copy", told)
			}
			if strings.Contains(logs.String(), "its files are gone") {
				t.Errorf("the copy logged a lost home:\n%s", logs)
			}
			open, err := r.store.OpenStorageIntervals(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := open[original]; ok {
				t.Errorf("the original's home %s is still metered in the copy", original)
			}
			if _, ok := open[clone.homeVolume("alice")]; !ok {
				t.Errorf("the copy's own home %s is not metered", clone.homeVolume("alice"))
			}
			if meterFirst && !strings.Contains(logs.String(), "level=INFO msg=\"storage metering: home volume of the original install closed in this copy (started with --new-identity)") {
				t.Errorf("no INFO line naming the copy:\n%s", logs)
			}
			// The original's volume is untouched.
			if !r.rt.HasVolume(original) {
				t.Errorf("the original's home volume %s was removed", original)
			}
		})
	}
}
