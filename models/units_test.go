package models

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// unitsFixture is a user, an image and a flavor: enough for workbench rows.
type unitsFixture struct {
	s    *Store
	user *User
	img  *Image
	fl   *Flavor
}

func newUnitsFixture(t *testing.T) *unitsFixture {
	t.Helper()
	s, _ := newTestStore(t)
	ctx := context.Background()
	u, err := s.CreateUser(ctx, NewUser{Username: "alice", Password: "correct-horse-1"})
	if err != nil {
		t.Fatal(err)
	}
	img := validImage()
	if err := s.CreateImage(ctx, &img); err != nil {
		t.Fatal(err)
	}
	fl := &Flavor{Name: "small", CPUMilli: 1000, MemoryMiB: 1024, Enabled: true}
	if err := s.CreateFlavor(ctx, fl); err != nil {
		t.Fatal(err)
	}
	return &unitsFixture{s: s, user: u, img: &img, fl: fl}
}

func (f *unitsFixture) launch(name string, need GPUNeed) (*Workbench, error) {
	wb := &Workbench{Name: name, OwnerID: f.user.ID, ImageID: f.img.ID, FlavorID: f.fl.ID, Token: "t"}
	return wb, f.s.CreateWorkbench(context.Background(), wb, need, nil)
}

const h100 = "NVIDIA H100 80GB HBM3"

func migNeed(count int, instances map[string]string) GPUNeed {
	n := GPUNeed{Kind: UnitMIG, Model: h100, Profile: "1g.10gb", Count: count, Parents: instances}
	for _, u := range []string{"MIG-a", "MIG-b", "MIG-c"} {
		if instances[u] != "" {
			n.Candidates = append(n.Candidates, u)
		}
	}
	return n
}

// TestMIGAllocationByUUID: each launch binds MIG instances by their MIG
// UUID, never one twice; the workbench lists the instance as its unit and
// the parent GPU as the GPU it touches; a launch beyond the instances is
// refused with a MIG-worded error.
func TestMIGAllocationByUUID(t *testing.T) {
	f := newUnitsFixture(t)
	inst := map[string]string{"MIG-a": "GPU-0", "MIG-b": "GPU-0", "MIG-c": "GPU-1"}
	a, err := f.launch("a", migNeed(2, inst))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Units) != 2 || a.Units[0].Kind != UnitMIG || a.Units[0].UUID != "MIG-a" || a.Units[1].UUID != "MIG-b" ||
		a.Units[0].Profile != "1g.10gb" || len(a.GPUs) != 1 || a.GPUs[0] != "GPU-0" || a.Shared {
		t.Fatalf("first MIG launch: units %+v gpus %v shared %v", a.Units, a.GPUs, a.Shared)
	}
	if ids := DeviceIDs(a.Units); len(ids) != 2 || ids[0] != "MIG-a" || ids[1] != "MIG-b" {
		t.Fatalf("device IDs %v, want the two MIG UUIDs", ids)
	}
	b, err := f.launch("b", migNeed(1, inst))
	if err != nil || len(b.Units) != 1 || b.Units[0].UUID != "MIG-c" || b.GPUs[0] != "GPU-1" {
		t.Fatalf("second MIG launch: %+v, %v", b, err)
	}
	_, err = f.launch("c", migNeed(1, inst))
	var nc *NoCapacityError
	if !errors.As(err, &nc) || nc.Kind != UnitMIG || nc.Free != 0 || err.Error() != "not enough free MIG instances: 1 × 1g.10gb requested, 0 free" {
		t.Fatalf("third MIG launch: %v", err)
	}
	// Read back: what the API shows.
	got, err := f.s.WorkbenchByID(context.Background(), a.ID)
	if err != nil || len(got.Units) != 2 || got.Units[0].UUID != "MIG-a" || got.GPUs[0] != "GPU-0" {
		t.Fatalf("read back %+v, %v", got, err)
	}
	// Released instances are free again.
	if err := f.s.ReleaseGPUs(context.Background(), a.ID); err != nil {
		t.Fatal(err)
	}
	if c, err := f.launch("c", migNeed(2, inst)); err != nil || c.Units[0].UUID != "MIG-a" {
		t.Fatalf("after release: %+v, %v", c, err)
	}
}

// TestSharedSlices: a GPU shared in 3 slices takes 3 workbenches and
// refuses the 4th; it is never handed out whole meanwhile; slices spread
// over the least crowded shared GPU; an admin cannot share a GPU held whole,
// nor drop a slice that is held.
func TestSharedSlices(t *testing.T) {
	f := newUnitsFixture(t)
	ctx := context.Background()
	if _, err := f.s.SetGPUShared(ctx, "GPU-S", SharedSetting{Slices: 3}, "admin"); err != nil {
		t.Fatal(err)
	}
	slice := GPUNeed{Kind: UnitSlice, Model: h100, Count: 1, Candidates: []string{"GPU-S"}}
	var held []*Workbench
	for i := 0; i < 3; i++ {
		wb, err := f.launch(fmt.Sprintf("s%d", i), slice)
		if err != nil {
			t.Fatalf("slice %d of 3: %v", i, err)
		}
		if len(wb.Units) != 1 || wb.Units[0].Kind != UnitSlice || wb.Units[0].UUID != "GPU-S" || *wb.Units[0].Slice != i || !wb.Shared ||
			len(wb.GPUs) != 1 || wb.GPUs[0] != "GPU-S" {
			t.Fatalf("slice %d: units %+v gpus %v shared %v", i, wb.Units, wb.GPUs, wb.Shared)
		}
		if ids := DeviceIDs(wb.Units); len(ids) != 1 || ids[0] != "GPU-S" {
			t.Fatalf("a slice's device is its shared GPU, got %v", ids)
		}
		held = append(held, wb)
	}
	_, err := f.launch("s3", slice)
	var nc *NoCapacityError
	if !errors.As(err, &nc) || nc.Kind != UnitSlice || nc.Free != 0 {
		t.Fatalf("the 4th workbench on a GPU of 3 slices: %v, want refused", err)
	}
	// A shared GPU is not handed out whole, even with a slice free.
	if err := f.s.ReleaseGPUs(ctx, held[1].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.launch("whole", GPUNeed{Model: h100, Count: 1, Candidates: []string{"GPU-S"}}); !errors.As(err, &nc) {
		t.Fatalf("whole GPU on a shared GPU: %v, want refused", err)
	}
	// Slice 2 is held: 2 slices would orphan it; unsharing too.
	var ce *ConflictError
	if _, err := f.s.SetGPUShared(ctx, "GPU-S", SharedSetting{Slices: 2}, "admin"); !errors.As(err, &ce) {
		t.Fatalf("dropping a held slice: %v, want a conflict", err)
	}
	if _, err := f.s.SetGPUShared(ctx, "GPU-S", SharedSetting{}, "admin"); !errors.As(err, &ce) {
		t.Fatalf("unsharing with slices held: %v, want a conflict", err)
	}
	// Not "keep at least 1 slice": one slice is refused (Validate).
	if !strings.Contains(ce.Message, "keep the GPU shared until it stops") {
		t.Errorf("unsharing with slice 0 held: %q", ce.Message)
	}
	// The freed slice 1 is taken again.
	if wb, err := f.launch("again", slice); err != nil || *wb.Units[0].Slice != 1 {
		t.Fatalf("relaunch on the freed slice: %+v, %v", wb, err)
	}
	// A GPU held whole cannot be shared.
	if _, err := f.launch("w", GPUNeed{Model: h100, Count: 1, Candidates: []string{"GPU-W"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.SetGPUShared(ctx, "GPU-W", SharedSetting{Slices: 2}, "admin"); !errors.As(err, &ce) {
		t.Fatalf("sharing a GPU held whole: %v, want a conflict", err)
	}
	// Spread: with a second shared GPU, the next slice goes to the empty one.
	if _, err := f.s.SetGPUShared(ctx, "GPU-T", SharedSetting{Slices: 2, MPSMemoryMiB: 8192, MPSThreadPercent: 25}, "admin"); err != nil {
		t.Fatal(err)
	}
	two := GPUNeed{Kind: UnitSlice, Model: h100, Count: 1, Candidates: []string{"GPU-S", "GPU-T"}}
	if wb, err := f.launch("t0", two); err != nil || wb.Units[0].UUID != "GPU-T" {
		t.Fatalf("spread to the least crowded shared GPU: %+v, %v", wb, err)
	}
	states, _ := f.s.GPUStates(ctx)
	if st := states["GPU-T"]; st.SharedSlices != 2 || st.MPSMemoryMiB != 8192 || st.MPSThreadPercent != 25 {
		t.Fatalf("shared setting stored as %+v", st)
	}
	if _, err := f.s.SetGPUShared(ctx, "GPU-T", SharedSetting{Slices: 2, MPSThreadPercent: 101}, "admin"); err == nil {
		t.Fatal("a thread share over 100% accepted")
	}
}

// TestConcurrentUnitLaunchesNeverDoubleBind: 40 launches at once for MIG
// instances and slices; exactly as many succeed as there are units, and no
// unit is bound twice (the launch transaction is BEGIN IMMEDIATE).
func TestConcurrentUnitLaunchesNeverDoubleBind(t *testing.T) {
	f := newUnitsFixture(t)
	ctx := context.Background()
	if _, err := f.s.SetGPUShared(ctx, "GPU-S", SharedSetting{Slices: 4}, "admin"); err != nil {
		t.Fatal(err)
	}
	inst := map[string]string{}
	mig := GPUNeed{Kind: UnitMIG, Model: h100, Profile: "1g.10gb", Count: 1, Parents: inst}
	for i := 0; i < 7; i++ {
		u := fmt.Sprintf("MIG-%d", i)
		inst[u] = "GPU-M"
		mig.Candidates = append(mig.Candidates, u)
	}
	slice := GPUNeed{Kind: UnitSlice, Model: h100, Count: 1, Candidates: []string{"GPU-S"}}
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := map[string]int{}
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			need := mig
			if i%2 == 1 {
				need = slice
			}
			_, err := f.launch(fmt.Sprintf("c%d", i), need)
			var nc *NoCapacityError
			if err != nil && !errors.As(err, &nc) {
				t.Errorf("launch %d: %v", i, err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				won[need.Kind]++
			}
		}(i)
	}
	wg.Wait()
	if won[UnitMIG] != 7 || won[UnitSlice] != 4 {
		t.Fatalf("successful launches %v, want 7 MIG and 4 slices", won)
	}
	bound, err := f.s.UnitAllocations(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, b := range bound {
		key := b.UUID
		if b.Slice != nil {
			key = fmt.Sprintf("%s/%d", b.UUID, *b.Slice)
		}
		if seen[key] {
			t.Fatalf("unit %s bound twice", key)
		}
		seen[key] = true
	}
	if len(bound) != 11 {
		t.Fatalf("%d units bound, want 11", len(bound))
	}
}

// TestFlavorUnitKinds: validation of the unit fields and the default rate a
// MIG or slice flavor brings with it.
func TestFlavorUnitKinds(t *testing.T) {
	f := newUnitsFixture(t)
	ctx := context.Background()
	bad := []Flavor{
		{Name: "m", GPUModel: h100, GPUCount: 1, UnitKind: UnitMIG, CPUMilli: 1000, MemoryMiB: 1024},
		{Name: "m", GPUModel: h100, GPUCount: 1, UnitKind: UnitMIG, MIGProfile: "big", CPUMilli: 1000, MemoryMiB: 1024},
		{Name: "s", GPUModel: h100, GPUCount: 2, UnitKind: UnitSlice, CPUMilli: 1000, MemoryMiB: 1024},
		{Name: "x", GPUModel: h100, GPUCount: 1, UnitKind: "vgpu", CPUMilli: 1000, MemoryMiB: 1024},
	}
	for _, fl := range bad {
		if err := f.s.CreateFlavor(ctx, &fl); err == nil {
			t.Errorf("flavor %+v accepted", fl)
		}
	}
	mig := &Flavor{Name: "mig", GPUModel: h100, GPUCount: 1, UnitKind: UnitMIG, MIGProfile: "3g.40gb", CPUMilli: 1000, MemoryMiB: 1024}
	sl := &Flavor{Name: "slice", GPUModel: h100, GPUCount: 1, UnitKind: UnitSlice, CPUMilli: 1000, MemoryMiB: 1024}
	cpu := &Flavor{Name: "cpu", UnitKind: UnitMIG, MIGProfile: "1g.10gb", CPUMilli: 1000, MemoryMiB: 1024}
	for _, fl := range []*Flavor{mig, sl, cpu} {
		if err := f.s.CreateFlavor(ctx, fl); err != nil {
			t.Fatalf("%s: %v", fl.Name, err)
		}
	}
	if cpu.UnitKind != UnitGPU || cpu.MIGProfile != "" || !sl.Shared() || mig.Shared() {
		t.Fatalf("normalised: cpu %q/%q, slice shared %v, mig shared %v", cpu.UnitKind, cpu.MIGProfile, sl.Shared(), mig.Shared())
	}
	cur, err := f.s.CurrentPrices(ctx, f.s.now())
	if err != nil {
		t.Fatal(err)
	}
	// 3 of 7 compute slices of an H100's 3.00/h; a quarter for a slice.
	if r := cur[PriceKey(UnitMIG, "3g.40gb")]; r.Micros != 3_000_000*3/7 || !r.IsDefault {
		t.Fatalf("seeded MIG rate %+v", r)
	}
	if r := cur[PriceKey(UnitSlice, h100)]; r.Micros != 750_000 || !r.IsDefault {
		t.Fatalf("seeded slice rate %+v", r)
	}
	// An admin's MIG rate names the profile.
	if err := f.s.AddPriceRate(ctx, &PriceRate{Resource: UnitMIG, GPUModel: "an H100", Micros: 1}); err == nil {
		t.Fatal("a MIG rate without a profile accepted")
	}
	if err := f.s.AddPriceRate(ctx, &PriceRate{Resource: UnitMIG, GPUModel: "1G.10GB", Micros: 500_000, CreatedBy: "admin"}); err != nil {
		t.Fatal(err)
	}
}

// TestSeedMIGFlavors: one flavor per discovered profile, once; an admin's
// own flavor of a profile stops the seed for it.
func TestSeedMIGFlavors(t *testing.T) {
	f := newUnitsFixture(t)
	ctx := context.Background()
	mine := &Flavor{Name: "mine", GPUModel: h100, GPUCount: 2, UnitKind: UnitMIG, MIGProfile: "3g.40gb", CPUMilli: 1000, MemoryMiB: 1024}
	if err := f.s.CreateFlavor(ctx, mine); err != nil {
		t.Fatal(err)
	}
	profiles := map[string]string{"1g.10gb": h100, "3g.40gb": h100}
	for i := 0; i < 2; i++ {
		if err := f.s.SeedMIGFlavors(ctx, profiles); err != nil {
			t.Fatal(err)
		}
	}
	fls, _ := f.s.ListFlavors(ctx, false)
	count := map[string]int{}
	for _, fl := range fls {
		count[fl.MIGProfile]++
	}
	if count["1g.10gb"] != 1 || count["3g.40gb"] != 1 {
		t.Fatalf("MIG flavors per profile %v, want one each", count)
	}
	seeded, err := f.s.FlavorByNameOrID(ctx, "1x MIG 1g.10gb (H100 80GB HBM3)")
	if err != nil || seeded.UnitKind != UnitMIG || seeded.GPUCount != 1 || !seeded.Enabled {
		t.Fatalf("seeded flavor %+v (%v)", seeded, err)
	}
}
