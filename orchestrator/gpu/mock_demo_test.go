package gpu

import (
	"context"
	"testing"
	"time"
)

// The demo load keeps the mock's stable UUIDs, makes odd GPUs busy and
// even ones idle, and its energy counter only grows.
func TestLiveMockDemoLoad(t *testing.T) {
	lib, load, err := NewLiveMock("dgxh100")
	if err != nil {
		t.Fatal(err)
	}
	inv := mustNew(t, "mock:dgxh100", WithNVML(lib, true, "mock:dgxh100"))
	plain := mustNew(t, "mock:dgxh100")
	a, _ := inv.Devices(testCtx(t))
	b, _ := plain.Devices(testCtx(t))
	if len(a) != 8 || a[3].UUID != b[3].UUID {
		t.Fatalf("live mock UUIDs differ from mode mock:dgxh100's")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { load.RunDemo(ctx, 5*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()
	var first []Sample
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := inv.Sample(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		if first == nil && s[1].UtilPercent > 0 {
			first = s
		}
		if first != nil && s[1].EnergyMilliJ > first[1].EnergyMilliJ {
			for i, g := range s {
				if i%2 == 1 && (g.UtilPercent < 39 || g.UtilPercent > 95) {
					t.Errorf("busy GPU %d at %d%%", i, g.UtilPercent)
				}
				if i%2 == 0 && g.UtilPercent > 3 {
					t.Errorf("idle GPU %d at %d%%", i, g.UtilPercent)
				}
				if g.PowerMilliW < 70000 {
					t.Errorf("GPU %d draws %d mW", i, g.PowerMilliW)
				}
				// Memory follows the work: 10 % of the 80 GB held when
				// idle, more when busy, never a GPU of no memory.
				if g.MemUsedMiB+g.MemFreeMiB != 81920 || g.MemUsedMiB < 8192 {
					t.Errorf("GPU %d memory %d used + %d free MiB", i, g.MemUsedMiB, g.MemFreeMiB)
				}
				if i%2 == 1 && g.MemUsedMiB <= s[i-1].MemUsedMiB {
					t.Errorf("busy GPU %d holds %d MiB, idle GPU %d %d MiB", i, g.MemUsedMiB, i-1, s[i-1].MemUsedMiB)
				}
				// A busy GPU's work is a compute process NVML lists (on
				// a free GPU the pool shows it as used outside the
				// portal); an idle GPU runs none.
				if busy := i%2 == 1; busy != (len(g.Processes) == 1) || busy && g.Processes[0].UsedMemMiB == 0 {
					t.Errorf("GPU %d (busy: %v) lists processes %+v", i, busy, g.Processes)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the demo load did not advance the energy counter")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// With MIG instances (WORKBENCH_MOCK_MIG) the demo load gives each
// instance its own readings through its MIG device handle: utilisation
// (busy odd instances, idle even ones) and memory.
func TestLiveMockDemoLoadMIGInstances(t *testing.T) {
	lib, load, err := NewLiveMock("dgxh100")
	if err != nil {
		t.Fatal(err)
	}
	if err := PartitionMock(lib, []MockMIGPart{{Index: 7, Profiles: []string{"1g.10gb", "1g.10gb", "1g.10gb"}}}); err != nil {
		t.Fatal(err)
	}
	h := NewMockMIGHandles(lib)
	load.DriveMIG(h)
	inv := mustNew(t, "mock:dgxh100", WithNVML(h, true, "mock:dgxh100"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { load.RunDemo(ctx, 5*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := inv.Sample(testCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		mig := s[7].MIG
		// The demo sets the instances one after another: a sample taken
		// during its first round can see instance 1 set and instance 0
		// not yet (a make test run did). Once every instance has read,
		// all are set for good, and a fresh sample is what to judge.
		if len(mig) == 3 && mig[0].Readable(FieldUtil) && mig[1].Readable(FieldUtil) && mig[2].Readable(FieldUtil) {
			if s, err = inv.Sample(testCtx(t)); err != nil {
				t.Fatal(err)
			}
			mig = s[7].MIG
			if len(mig) != 3 {
				t.Fatalf("%d MIG instance readings, want 3", len(mig))
			}
			for k, m := range mig {
				if !m.Readable(FieldUtil) || !m.Readable(FieldMemory) {
					t.Fatalf("instance %d unread: %+v", k, m)
				}
				if k%2 == 1 && (m.UtilPercent < 39 || m.UtilPercent > 95) || k%2 == 0 && m.UtilPercent > 3 {
					t.Errorf("instance %d at %d%%", k, m.UtilPercent)
				}
				if m.MemUsedMiB == 0 || m.MemUsedMiB+m.MemFreeMiB != 10*1024 {
					t.Errorf("instance %d memory %d used + %d free MiB", k, m.MemUsedMiB, m.MemFreeMiB)
				}
			}
			if s[7].Readable(FieldUtil) {
				t.Error("a MIG GPU answered whole-GPU utilisation")
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the demo load gave the MIG instances no utilisation: %+v", mig)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
