package models

import (
	"context"
	"strings"
	"testing"
)

// TestNewInstallIDDetachesTheCopy: a copy given its own install id forgets
// the containers its records name (a delete in the copy removed the
// original's container by that id) and stops what waits in its queue with
// the reason (the copy placed a copied queued launch on GPUs the original
// held), as are launches under way, which give their GPUs back (the copy's
// reconciliation finished them on GPUs the original holds); a running
// record stays for reconciliation to close.
func TestNewInstallIDDetachesTheCopy(t *testing.T) {
	f := newMoneyFixture(t)
	ctx := context.Background()
	s := f.s
	before, err := s.InstallID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(name, state string) *Workbench {
		wb := &Workbench{Name: name, OwnerID: f.user.ID, ImageID: f.wb.ImageID, FlavorID: f.wb.FlavorID, Token: "t"}
		if err := s.CreateWorkbench(ctx, wb, GPUNeed{}, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.db.Model(&Workbench{}).Where("id = ?", wb.ID).Updates(map[string]any{"state": state, "container_id": "c-" + name}).Error; err != nil {
			t.Fatal(err)
		}
		return wb
	}
	running, queued, preempted := mk("run", StateRunning), mk("wait", StateQueued), mk("yielded", StatePreempted)
	// A launch the original had under way when the data was copied: the
	// copy's reconciliation would finish it, on a GPU the original holds.
	launching := mk("half", StateCreating)
	if err := s.db.Create(&gpuAllocation{UnitID: "GPU-copied", Kind: UnitGPU, GPUUUID: "GPU-copied", WorkbenchID: launching.ID, AllocatedAt: s.now()}).Error; err != nil {
		t.Fatal(err)
	}
	id, err := s.NewInstallID(ctx)
	if err != nil || id == before {
		t.Fatalf("new install id %q (%v), was %q", id, err, before)
	}
	if got, _ := s.InstallID(ctx); got != id {
		t.Errorf("install id %q, want %q", got, id)
	}
	for _, wb := range []*Workbench{running, queued, preempted, launching} {
		got, err := s.WorkbenchByID(ctx, wb.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.ContainerID != "" {
			t.Errorf("%s still names container %q", got.Name, got.ContainerID)
		}
		want := StateStopped
		if wb == running {
			want = StateRunning
		}
		if got.State != want {
			t.Errorf("%s: state %s, want %s", got.Name, got.State, want)
		}
		if want == StateStopped && !strings.Contains(got.Reason, "--new-identity") {
			t.Errorf("%s: reason %q", got.Name, got.Reason)
		}
	}
	var held int64
	if err := s.db.Model(&gpuAllocation{}).Where("workbench_id = ?", launching.ID).Count(&held).Error; err != nil || held != 0 {
		t.Errorf("the copied launch still holds %d units (%v)", held, err)
	}
}
