package gpu

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// liveH100 is a DGX H100 mock with MockLoad attached, behind a real inventory.
func liveH100(t *testing.T) (Inventory, *MockLoad) {
	t.Helper()
	srv := dgxh100.New()
	load := AttachMockLoad(srv)
	return mustNew(t, "mock:dgxh100", WithNVML(srv, true, "mock:dgxh100")), load
}

func TestSampleReadsLoadAndTellsZeroFromUnreadable(t *testing.T) {
	inv, load := liveH100(t)
	load.Set(0, MockGPULoad{UtilPercent: 87, MemUtilPercent: 40, MemUsedMiB: 2048, PowerMilliW: 692000, EnergyMilliJ: 123456789, TempC: 61,
		Processes: []Process{{PID: 4242, UsedMemMiB: 1024}}})
	load.Set(1, MockGPULoad{}) // readable 0%
	load.Set(2, MockGPULoad{UtilPercent: 50, Fail: true})

	samples, err := inv.Sample(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != 8 {
		t.Fatalf("%d samples, want 8", len(samples))
	}
	busy, zero, broken := samples[0], samples[1], samples[2]
	if busy.UtilPercent != 87 || busy.MemUtilPercent != 40 || busy.PowerMilliW != 692000 ||
		busy.EnergyMilliJ != 123456789 || busy.TempC != 61 {
		t.Errorf("busy GPU read %+v", busy)
	}
	for _, f := range []Field{FieldUtil, FieldMemUtil, FieldPower, FieldEnergy, FieldTemp, FieldMemory, FieldProcesses} {
		if !busy.Readable(f) {
			t.Errorf("busy GPU: field %b unread", f)
		}
	}
	// The GPU's memory is the mock's 80 GB: what is not used is free.
	if busy.MemUsedMiB != 2048 || busy.MemUsedMiB+busy.MemFreeMiB != 81920 {
		t.Errorf("busy GPU memory %d used + %d free MiB, want 2048 of 81920", busy.MemUsedMiB, busy.MemFreeMiB)
	}
	if zero.MemUsedMiB != 0 || zero.MemFreeMiB != 81920 {
		t.Errorf("idle GPU memory %d used + %d free MiB, want all 81920 free", zero.MemUsedMiB, zero.MemFreeMiB)
	}
	if len(busy.Processes) != 1 || busy.Processes[0].PID != 4242 || busy.Processes[0].UsedMemMiB != 1024 {
		t.Errorf("processes = %+v", busy.Processes)
	}
	if !zero.Readable(FieldUtil) || zero.UtilPercent != 0 {
		t.Errorf("idle GPU: readable=%v util=%d, want a readable 0%%", zero.Readable(FieldUtil), zero.UtilPercent)
	}
	for _, f := range []Field{FieldUtil, FieldMemUtil, FieldMemory, FieldPower, FieldEnergy, FieldTemp, FieldProcesses} {
		if broken.Readable(f) {
			t.Errorf("failing GPU: field %b marked readable", f)
		}
	}
	if broken.UtilPercent != 0 {
		t.Errorf("failing GPU carries a value %d", broken.UtilPercent)
	}
	// The stock mock answers no clocks or ECC: unread, not zero-valued facts.
	if busy.Readable(FieldSMClock) || busy.Readable(FieldECC) {
		t.Error("clock/ECC the mock does not answer marked readable")
	}
}

func TestSamplerIdleRunsNeverIncludeUnreadable(t *testing.T) {
	inv, load := liveH100(t)
	devs, err := inv.Devices(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	idle, busy, broken := devs[0].UUID, devs[1].UUID, devs[2].UUID
	s := NewSampler(inv, time.Hour, 3, quietLogger())
	load.Set(0, MockGPULoad{UtilPercent: 4})
	load.Set(1, MockGPULoad{UtilPercent: 5}) // at the threshold: busy
	load.Set(2, MockGPULoad{Fail: true})
	ctx := testCtx(t)
	if err := s.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	first, ok := s.IdleSince(idle)
	if !ok {
		t.Fatal("a GPU at 4% is not idle")
	}
	if _, ok := s.IdleSince(busy); ok {
		t.Error("a GPU at 5% (threshold) counts as idle")
	}
	if _, ok := s.IdleSince(broken); ok {
		t.Error("an unreadable GPU counts as idle")
	}
	// The run outlives the bounded history (capacity 3).
	for range 5 {
		if err := s.Collect(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got, ok := s.IdleSince(idle); !ok || !got.Equal(first) {
		t.Errorf("idle run start moved: %v %v, want %v", got, ok, first)
	}
	if n := len(s.History(idle)); n != 3 {
		t.Errorf("history holds %d samples, want capacity 3", n)
	}
	// One unreadable reading ends the run; idleness restarts afterwards.
	load.Set(0, MockGPULoad{UtilPercent: 4, Fail: true})
	if err := s.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.IdleSince(idle); ok {
		t.Error("idle run survived an unreadable sample")
	}
	last, _ := s.Latest(idle)
	if last.Readable(FieldUtil) {
		t.Error("latest sample of the failing GPU marked readable")
	}
	load.Set(0, MockGPULoad{UtilPercent: 0})
	if err := s.Collect(ctx); err != nil {
		t.Fatal(err)
	}
	if got, ok := s.IdleSince(idle); !ok || !got.After(first) {
		t.Errorf("new idle run %v %v should start after %v", got, ok, first)
	}
	// A failed collection (the whole inventory) is not idleness either.
	_ = inv.Close()
	if err := s.Collect(ctx); err == nil {
		t.Fatal("Collect on a closed inventory succeeded")
	}
	if _, ok := s.IdleSince(idle); ok {
		t.Error("idle run survived a failed collection")
	}
}

// BenchmarkSample8GPUs measures one telemetry cycle of 8 GPUs (mock NVML,
// so this is the portal's own overhead: locking, safe calls, allocation).
func BenchmarkSample8GPUs(b *testing.B) {
	srv := dgxh100.New()
	load := AttachMockLoad(srv)
	for i := range 8 {
		load.Set(i, MockGPULoad{UtilPercent: 50, Processes: []Process{{PID: uint32(1000 + i), UsedMemMiB: 10}}})
	}
	m, _ := ParseMode("mock:dgxh100")
	inv, err := New(m, WithLogger(quietLogger()), WithNVML(srv, true, "mock:dgxh100"))
	if err != nil {
		b.Fatal(err)
	}
	defer inv.Close()
	s := NewSampler(inv, time.Second, DefaultSampleCapacity, quietLogger())
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		if err := s.Collect(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// XID events reach the sample of their GPU; a GPU whose driver gives no
// events has its XID reading unread, not "no XID".
func TestSampleXIDEvents(t *testing.T) {
	inv, load := liveH100(t)
	ctx := testCtx(t)
	first, err := inv.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !first[0].Readable(FieldXID) || first[0].LastXID != 0 {
		t.Fatalf("no XID yet: readable=%v last=%d", first[0].Readable(FieldXID), first[0].LastXID)
	}
	load.XID(2, 79)
	load.XID(2, 48)
	load.XID(5, 13)
	got, err := inv.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got[2].LastXID != 48 || got[5].LastXID != 13 || got[0].LastXID != 0 {
		t.Errorf("last XIDs: gpu2=%d gpu5=%d gpu0=%d, want 48 13 0", got[2].LastXID, got[5].LastXID, got[0].LastXID)
	}
	// The stock mock has no event sets: XID unread.
	plain := mustNew(t, "mock:dgxh100")
	ps, err := plain.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ps[0].Readable(FieldXID) {
		t.Error("XID readable without an event set")
	}
}

// Per-process utilisation is asked for only on GPUs that have processes:
// on a real H200 the call costs ~2.4 ms, most of an idle GPU's reading
// (BenchmarkRealGPUCalls), and an idle GPU has nobody to give it to. Its
// per-process utilisation still reads as readable (there is none to miss).
func TestProcessUtilisationAskedOnlyWhereProcessesRun(t *testing.T) {
	srv := dgxh100.New()
	load := AttachMockLoad(srv)
	asked := map[int]int{}
	var mu sync.Mutex
	for i, d := range srv.Devices {
		dev := d.(*server.Device)
		read := dev.GetProcessUtilizationFunc
		dev.GetProcessUtilizationFunc = func(since uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
			mu.Lock()
			asked[i]++
			mu.Unlock()
			return read(since)
		}
	}
	inv := mustNew(t, "mock:dgxh100", WithNVML(srv, true, "mock:dgxh100"))
	load.Set(3, MockGPULoad{UtilPercent: 90, Processes: []Process{{PID: 77, UsedMemMiB: 2048, SMUtilPercent: 64}}})

	samples, err := inv.Sample(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[3] != 1 {
		t.Errorf("GetProcessUtilization asked per GPU index %v; want only GPU 3, once", asked)
	}
	busy := samples[3]
	if !busy.Readable(FieldProcessUtil) || len(busy.Processes) != 1 || busy.Processes[0].SMUtilPercent != 64 {
		t.Errorf("GPU 3 processes %+v, process utilisation readable %v; want PID 77 at 64%%", busy.Processes, busy.Readable(FieldProcessUtil))
	}
	if idle := samples[0]; !idle.Readable(FieldProcesses) || !idle.Readable(FieldProcessUtil) || len(idle.Processes) != 0 {
		t.Errorf("idle GPU 0: processes %+v, unread %b; want none, both readable", idle.Processes, idle.Unread)
	}
}

// A collection takes the NVML lock one GPU at a time: an inventory read
// (the pool page, a launch) that arrives during it waits for one GPU's
// reading, not for all of them. On a real H200 a reading takes 4–7 ms
// (BenchmarkRealGPUSample), so an 8-GPU server's collection held every
// inventory read for up to ~55 ms. Here each mock GPU's energy counter
// takes 20 ms; Devices starts while GPU 0 is being read and must be done
// before the collection has read every GPU. (Go's mutex hands the lock to
// a waiter that has waited over 1 ms at the next unlock, so it gets in
// after GPU 1 at the latest, however busy the machine.)
func TestInventoryReadWaitsForOneGPUNotTheCollection(t *testing.T) {
	srv := dgxh100.New()
	AttachMockLoad(srv)
	var read atomic.Int32
	entered := make(chan struct{})
	var once sync.Once
	for _, d := range srv.Devices {
		dev := d.(*server.Device)
		energy := dev.GetTotalEnergyConsumptionFunc
		dev.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) {
			once.Do(func() { close(entered) })
			time.Sleep(20 * time.Millisecond)
			read.Add(1)
			return energy()
		}
	}
	inv := mustNew(t, "mock:dgxh100", WithNVML(srv, true, "mock:dgxh100"))
	ctx := testCtx(t)
	sampled := make(chan error, 1)
	go func() {
		_, err := inv.Sample(ctx)
		sampled <- err
	}()
	<-entered
	if _, err := inv.Devices(ctx); err != nil {
		t.Fatal(err)
	}
	if n := read.Load(); n >= int32(len(srv.Devices)) {
		t.Errorf("Devices returned after the collection had read all %d GPUs: it waited for the whole collection", n)
	}
	if err := <-sampled; err != nil {
		t.Fatal(err)
	}
	if n := read.Load(); n != int32(len(srv.Devices)) {
		t.Errorf("the collection read %d of %d GPUs", n, len(srv.Devices))
	}
}
