package orchestrator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"workbench/models"
	"workbench/orchestrator/gpu"
)

// useOf collects and attributes, and returns GPU i's use.
func (r *unitTelRig) useOf(t *testing.T, d time.Duration, i int) GPUUse {
	t.Helper()
	r.at(t, d)
	uses, err := r.m.GPUUse(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range uses {
		if u.Index == i {
			return u
		}
	}
	t.Fatalf("no GPU %d in %+v", i, uses)
	return GPUUse{}
}

// moveProcess rewrites the fake /proc/pid/cgroup to name the container of
// the workbench whose process was owner (the rig names containers by PID).
func (r *unitTelRig) moveProcess(t *testing.T, pid, owner int) {
	t.Helper()
	cid := fmt.Sprintf("%064x", owner)
	if err := os.WriteFile(filepath.Join(procRoot, fmt.Sprint(pid), "cgroup"), []byte("0::/system.slice/docker-"+cid+".scope\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (r *unitTelRig) procs(pids ...uint32) {
	ps := make([]gpu.Process, 0, len(pids))
	for _, p := range pids {
		ps = append(ps, gpu.Process{PID: p, UsedMemMiB: 1000, SMUtilPercent: 10})
	}
	r.load.Set(2, gpu.MockGPULoad{UtilPercent: 50, PowerMilliW: 300_000, EnergyMilliJ: 1, Processes: ps})
}

func holdersOf(u GPUUse) map[uint32]string {
	out := map[uint32]string{}
	for _, p := range u.Processes {
		out[p.PID] = p.Holder.WorkbenchID
	}
	return out
}

// The attribution caches a process's container between collections; a
// PID that leaves the GPU's process list and comes back in another
// container (PID reuse) is read afresh, and a new process is attributed
// on the collection that first lists it.
func TestGPUUseCacheFollowsPIDReuse(t *testing.T) {
	r := newUnitTelRig(t)
	alice := r.holder(t, "alice", "vision", r.sliceNeed(), 4201)
	bob := r.holder(t, "bob", "audio", r.sliceNeed(), 4202)
	r.procs(4201)
	if got := holdersOf(r.useOf(t, 0, 2)); got[4201] != alice.ID {
		t.Fatalf("first collection: %v, want 4201 alice's", got)
	}
	r.procs(4201, 4202) // bob's process starts: attributed at once
	if got := holdersOf(r.useOf(t, time.Second, 2)); got[4201] != alice.ID || got[4202] != bob.ID {
		t.Fatalf("bob's new process: %v", got)
	}
	r.procs(4202) // alice's process ends ...
	r.useOf(t, 2*time.Second, 2)
	r.moveProcess(t, 4201, 4202) // ... and its PID is reused in bob's container
	r.procs(4201, 4202)
	if got := holdersOf(r.useOf(t, 3*time.Second, 2)); got[4201] != bob.ID || got[4202] != bob.ID {
		t.Fatalf("reused PID 4201: %v, want it bob's (%s), not alice's (%s)", got, bob.ID, alice.ID)
	}
}

// A workbench that stops is not credited with a process still listed
// under a PID its container had (reused by another container without the
// PID leaving the list between two collections), nor with its units.
func TestGPUUseCacheWorkbenchStopped(t *testing.T) {
	r := newUnitTelRig(t)
	ctx := context.Background()
	alice := r.holder(t, "alice", "vision", r.sliceNeed(), 4201)
	bob := r.holder(t, "bob", "audio", r.sliceNeed(), 4202)
	r.procs(4201, 4202)
	u := r.useOf(t, 0, 2)
	if got := holdersOf(u); got[4201] != alice.ID || len(u.Units) != 2 {
		t.Fatalf("before the stop: %v, units %+v", got, u.Units)
	}
	if err := r.store.SetWorkbenchState(ctx, alice.ID, models.StateStopped, 100, "", nil); err != nil {
		t.Fatal(err)
	}
	if err := r.store.ReleaseGPUs(ctx, alice.ID); err != nil {
		t.Fatal(err)
	}
	r.moveProcess(t, 4201, 4202)
	u = r.useOf(t, time.Second, 2)
	if got := holdersOf(u); got[4201] != bob.ID {
		t.Errorf("after alice stopped: %v, want 4201 bob's (%s)", got, bob.ID)
	}
	for _, uu := range u.Units {
		if uu.Holder.WorkbenchID == alice.ID {
			t.Errorf("stopped workbench still holds a unit: %+v", u.Units)
		}
	}
	// Stopped with its PID left as it was: no longer attributed to anyone.
	r.moveProcess(t, 4201, 4201)
	r.procs(4202)
	r.useOf(t, 2*time.Second, 2)
	r.procs(4201, 4202)
	if got := holdersOf(r.useOf(t, 3*time.Second, 2)); got[4201] != "" {
		t.Errorf("stopped workbench's process: %v, want no holder", got)
	}
}

// Units rebound from one workbench to another change holder on the next
// collection, and an owner's new group shows at once.
func TestGPUUseCacheUnitsRebound(t *testing.T) {
	r := newUnitTelRig(t)
	ctx := context.Background()
	carol := r.holder(t, "carol", "text", r.migNeed(0), 4301)
	migHolder := func(d time.Duration) Holder {
		t.Helper()
		for _, uu := range r.useOf(t, d, 5).Units {
			if uu.UUID == r.devs[5].MIG[0].UUID {
				return uu.Holder
			}
		}
		t.Fatal("MIG instance 0 not listed")
		return Holder{}
	}
	if h := migHolder(0); h.WorkbenchID != carol.ID || h.Group != "text" {
		t.Fatalf("before: %+v", h)
	}
	g, err := r.store.CreateGroup(ctx, "audio", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.store.AddGroupMember(ctx, g.ID, carol.OwnerID); err != nil {
		t.Fatal(err)
	}
	if h := migHolder(time.Second); h.Group != "audio,text" {
		t.Errorf("carol's new group: %+v", h)
	}
	if err := r.store.ReleaseGPUs(ctx, carol.ID); err != nil {
		t.Fatal(err)
	}
	if h := migHolder(2 * time.Second); h.WorkbenchID != "" {
		t.Errorf("released instance still held: %+v", h)
	}
	dave := r.holder(t, "dave", "vision", r.migNeed(0), 4302)
	if h := migHolder(3 * time.Second); h.WorkbenchID != dave.ID || h.User != "dave" {
		t.Errorf("rebound instance: %+v, want dave's %s", h, dave.ID)
	}
}
