package models

import (
	"context"
	"maps"
	"testing"
	"time"
)

// The pages that show what is free read what others' active bookings hold
// back for every kind of unit at once (HeldForOthersNow); each count is
// the one a launch's own check (ReservedForOthers) holds the user to: a
// booking's units less what its holders use, none from one's own bookings
// or a group's one is a member of, none from a booking not open yet or
// released.
func TestHeldForOthersNowAgreesWithTheLaunchCheck(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	const h100 = "NVIDIA H100 80GB HBM3"
	users := map[string]*User{}
	for _, name := range []string{"ada", "bob", "carol", "dan", "eve"} {
		u, err := s.CreateUser(ctx, NewUser{Username: name, Password: name + "-password-1"})
		if err != nil {
			t.Fatal(err)
		}
		users[name] = u
	}
	g, err := s.CreateGroup(ctx, "lab", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"bob", "carol"} {
		if err := s.AddGroupMember(ctx, g.ID, users[name].ID); err != nil {
			t.Fatal(err)
		}
	}
	img := validImage()
	if err := s.CreateImage(ctx, &img); err != nil {
		t.Fatal(err)
	}
	fl := &Flavor{Name: "1x H100", GPUModel: h100, GPUCount: 1, CPUMilli: 1000, MemoryMiB: 1024, Enabled: true}
	if err := s.CreateFlavor(ctx, fl); err != nil {
		t.Fatal(err)
	}
	run := func(owner, gpu string) {
		wb := &Workbench{Name: owner + "-run", OwnerID: users[owner].ID, ImageID: img.ID, FlavorID: fl.ID, Token: "t"}
		if err := s.CreateWorkbench(ctx, wb, GPUNeed{Model: h100, Count: 1, Candidates: []string{gpu}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC()
	book := func(by string, r Reservation) *Reservation {
		r.UserID, r.GPUModel, r.CreatedBy = users[by].ID, h100, by
		if r.StartsAt.IsZero() {
			r.StartsAt, r.EndsAt = now.Add(-time.Minute), now.Add(time.Hour)
		}
		if err := s.CreateReservation(ctx, &r, 8, false, "", nil); err != nil {
			t.Fatal(err)
		}
		return &r
	}
	book("ada", Reservation{UnitKind: UnitGPU, Units: 3})
	run("ada", "GPU-a") // ada's booking holds back 2
	book("bob", Reservation{UnitKind: UnitGPU, Units: 2, GroupID: &g.ID, GroupName: g.Name})
	run("carol", "GPU-b") // the group's holds back 1
	book("dan", Reservation{UnitKind: UnitMIG, MIGProfile: "1g.10gb", Units: 2})
	book("dan", Reservation{UnitKind: UnitSlice, Units: 1, StartsAt: now.Add(time.Hour), EndsAt: now.Add(2 * time.Hour)})
	gone := book("eve", Reservation{UnitKind: UnitGPU, Units: 1})
	if err := s.ReleaseReservation(ctx, gone.ID, "cancelled"); err != nil {
		t.Fatal(err)
	}

	gpus := UnitPool{Kind: UnitGPU, Model: h100}
	mig := UnitPool{Kind: UnitMIG, Model: h100, Profile: "1g.10gb"}
	slice := UnitPool{Kind: UnitSlice, Model: h100}
	want := map[string]map[UnitPool]int{
		"ada":   {gpus: 1, mig: 2},
		"bob":   {gpus: 2, mig: 2},
		"carol": {gpus: 2, mig: 2},
		"dan":   {gpus: 3},
		"eve":   {gpus: 3, mig: 2},
	}
	for name, w := range want {
		got, err := s.HeldForOthersNow(ctx, users[name].ID, now)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got, w) {
			t.Errorf("%s: held back %v, want %v", name, got, w)
		}
		for _, k := range []UnitPool{gpus, mig, slice} {
			_, held, err := s.ReservedForOthersNow(ctx, GPUNeed{Kind: k.Kind, Model: k.Model, Profile: k.Profile, Count: 1}, users[name].ID, now)
			if err != nil {
				t.Fatal(err)
			}
			if held != got[k] {
				t.Errorf("%s, %v: the page reads %d held back, a launch %d", name, k, got[k], held)
			}
		}
	}
}
