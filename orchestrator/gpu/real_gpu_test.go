package gpu

import (
	"context"
	"encoding/csv"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// Tests against the host's real NVIDIA driver. They run only where
// WORKBENCH_TEST_REAL_GPU=1 (a GPU machine: scripts/real-gpu-check.sh
// builds them here and runs them there); CI has no GPU, and go-nvml's
// mocks cover the portal's logic. What they check is what a mock cannot:
// that the portal reads a real driver the way nvidia-smi does, and that a
// GPU doing work reads busy and reads idle again once the work stops (the
// reading GPU-idle release and the utilisation pages rest on).

// realInventory opens the real NVML library, or skips.
func realInventory(t testing.TB) Inventory {
	t.Helper()
	if os.Getenv("WORKBENCH_TEST_REAL_GPU") != "1" {
		t.Skip("needs a real NVIDIA GPU: set WORKBENCH_TEST_REAL_GPU=1 on a GPU machine (scripts/real-gpu-check.sh)")
	}
	inv, err := New(Mode{Kind: KindAuto})
	if err != nil {
		t.Fatalf("NVML: %v", err)
	}
	t.Cleanup(func() { inv.Close() })
	if inv.Backend() != "nvml" || inv.Simulated() {
		t.Fatalf("auto mode on a GPU machine: backend %q simulated %v, status %q; want the real NVML", inv.Backend(), inv.Simulated(), inv.Status())
	}
	return inv
}

// nvidiaSMI returns one row per GPU of nvidia-smi --query-gpu=fields.
func nvidiaSMI(t testing.TB, fields ...string) [][]string {
	t.Helper()
	out, err := exec.Command("nvidia-smi", "--query-gpu="+strings.Join(fields, ","), "--format=csv,noheader,nounits").Output()
	if err != nil {
		t.Fatalf("nvidia-smi: %v", err)
	}
	r := csv.NewReader(strings.NewReader(string(out)))
	r.TrimLeadingSpace = true
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatalf("nvidia-smi output %q: %v", out, err)
	}
	return rows
}

func atoi(t testing.TB, s string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		t.Fatalf("number %q: %v", s, err)
	}
	return n
}

func TestRealGPUInventoryMatchesNvidiaSMI(t *testing.T) {
	inv := realInventory(t)
	devs, err := inv.Devices(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rows := nvidiaSMI(t, "index", "uuid", "name", "memory.total", "mig.mode.current", "driver_version")
	if len(devs) != len(rows) || len(devs) == 0 {
		t.Fatalf("portal sees %d GPUs, nvidia-smi %d: %+v", len(devs), len(rows), rows)
	}
	for i, d := range devs {
		row := rows[i]
		t.Logf("GPU %d: portal %q %d MiB MIG=%v health=%s %s; nvidia-smi %v", d.Index, d.Model, d.MemoryMiB, d.MIGEnabled, d.Health, d.UUID, row)
		if d.Index != atoi(t, row[0]) || d.UUID != row[1] || d.Model != row[2] {
			t.Errorf("GPU %d: portal (%d, %s, %q), nvidia-smi %v", i, d.Index, d.UUID, d.Model, row)
		}
		if want := uint64(atoi(t, row[3])); d.MemoryMiB != want {
			t.Errorf("GPU %d memory: portal %d MiB, nvidia-smi %d MiB", i, d.MemoryMiB, want)
		}
		if want := row[4] == "Enabled"; d.MIGEnabled != want {
			t.Errorf("GPU %d MIG: portal %v, nvidia-smi %q", i, d.MIGEnabled, row[4])
		}
		if d.Health != HealthOK {
			t.Errorf("GPU %d health %s: %s", i, d.Health, d.HealthDetail)
		}
	}
	if driver := rows[0][5]; !strings.Contains(inv.Status(), driver) {
		t.Errorf("status %q does not name the driver %s", inv.Status(), driver)
	}
}

func TestRealGPUReadingsMatchNvidiaSMI(t *testing.T) {
	inv := realInventory(t)
	ctx := context.Background()
	first, err := inv.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rows := nvidiaSMI(t, "temperature.gpu", "memory.total", "power.limit")
	// Energy is a counter in millijoules: a second reading a little later
	// must be higher on a powered GPU.
	time.Sleep(1500 * time.Millisecond)
	second, err := inv.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != len(rows) || len(second) != len(rows) {
		t.Fatalf("%d and %d samples for %d GPUs", len(first), len(second), len(rows))
	}
	for i, s := range first {
		t.Logf("GPU %d: util %d%% mem-util %d%% mem %d used %d free MiB, %d °C, %.1f W, SM %d MHz, mem %d MHz, ECC %d, %d processes, unread %b",
			i, s.UtilPercent, s.MemUtilPercent, s.MemUsedMiB, s.MemFreeMiB, s.TempC, float64(s.PowerMilliW)/1000, s.SMClockMHz, s.MemClockMHz, s.ECCUncorrected, len(s.Processes), s.Unread)
		// The readings every page, metric and idle decision use must be
		// read on a data-centre GPU.
		for _, f := range []struct {
			field Field
			name  string
		}{{FieldUtil, "utilisation"}, {FieldMemory, "memory"}, {FieldTemp, "temperature"}, {FieldPower, "power"}, {FieldEnergy, "energy"}, {FieldSMClock, "SM clock"}, {FieldMemClock, "memory clock"}, {FieldProcesses, "processes"}} {
			if !s.Readable(f.field) {
				t.Errorf("GPU %d: %s unread", i, f.name)
			}
		}
		if temp := atoi(t, rows[i][0]); int(s.TempC) < temp-5 || int(s.TempC) > temp+5 {
			t.Errorf("GPU %d temperature: portal %d °C, nvidia-smi %d °C", i, s.TempC, temp)
		}
		limitW, err := strconv.ParseFloat(rows[i][2], 64)
		if err != nil {
			t.Fatalf("power limit %q: %v", rows[i][2], err)
		}
		if w := float64(s.PowerMilliW) / 1000; w < 10 || w > limitW*1.1 {
			t.Errorf("GPU %d power %.1f W outside 10 W … its limit %.0f W", i, w, limitW)
		}
		total := uint64(atoi(t, rows[i][1]))
		if got := s.MemUsedMiB + s.MemFreeMiB; got > total || got < total*9/10 {
			t.Errorf("GPU %d: used %d + free %d MiB against a total of %d MiB", i, s.MemUsedMiB, s.MemFreeMiB, total)
		}
		if s.SMClockMHz == 0 || s.MemClockMHz == 0 {
			t.Errorf("GPU %d clocks: SM %d MHz, memory %d MHz", i, s.SMClockMHz, s.MemClockMHz)
		}
		if second[i].EnergyMilliJ <= s.EnergyMilliJ {
			t.Errorf("GPU %d energy did not grow in 1.5 s: %d then %d mJ", i, s.EnergyMilliJ, second[i].EnergyMilliJ)
		}
	}
}

// TestRealGPUBusyThenIdle runs WORKBENCH_TEST_GPU_LOAD (a command that
// keeps GPU 0 busy and holds at least 1 GiB of its memory until killed)
// and waits for the sampler to read GPU 0 busy, then idle once it is
// killed, as GPU-idle release would. It waits on those conditions with
// generous ceilings, never on a fixed sleep.
func TestRealGPUBusyThenIdle(t *testing.T) {
	inv := realInventory(t)
	load := os.Getenv("WORKBENCH_TEST_GPU_LOAD")
	if load == "" {
		t.Skip("set WORKBENCH_TEST_GPU_LOAD to a command that keeps GPU 0 busy until killed")
	}
	ctx := context.Background()
	sampler := NewSampler(inv, time.Second, 1000, nil)
	devs, err := inv.Devices(ctx)
	if err != nil || len(devs) == 0 {
		t.Fatalf("devices: %v %v", devs, err)
	}
	uuid := devs[0].UUID
	latest := func() Sample {
		t.Helper()
		if err := sampler.Collect(ctx); err != nil {
			t.Fatal(err)
		}
		s, ok := sampler.Latest(uuid)
		if !ok {
			t.Fatal("no sample for GPU 0")
		}
		return s
	}
	base := latest()
	t.Logf("before: util %d%%, %d MiB used, %.1f W, %d processes", base.UtilPercent, base.MemUsedMiB, float64(base.PowerMilliW)/1000, len(base.Processes))

	cmd := exec.Command("sh", "-c", load)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	t.Cleanup(stop)

	waitFor := func(what string, ceiling time.Duration, ok func(Sample) bool) Sample {
		t.Helper()
		deadline := time.Now().Add(ceiling)
		for {
			s := latest()
			if ok(s) {
				return s
			}
			select {
			case err := <-exited:
				if what == "busy" {
					t.Fatalf("the load exited before GPU 0 read busy: %v", err)
				}
				exited <- err
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("GPU 0 never read %s within %s; last: util %d%%, %d MiB used, unread %b", what, ceiling, s.UtilPercent, s.MemUsedMiB, s.Unread)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	busy := waitFor("busy", 3*time.Minute, func(s Sample) bool {
		return s.Readable(FieldUtil) && s.UtilPercent >= 50 && s.MemUsedMiB >= base.MemUsedMiB+1024
	})
	if _, idle := sampler.IdleSince(uuid); idle {
		t.Error("GPU 0 counts as idle while the load runs")
	}
	t.Logf("busy: util %d%%, %d MiB used, %.1f W, SM %d MHz", busy.UtilPercent, busy.MemUsedMiB, float64(busy.PowerMilliW)/1000, busy.SMClockMHz)
	// The process list is how slice holders and GPU-idle release tell
	// whose work it is. PIDs are the driver's view (the host's PID space),
	// so only the memory is compared here.
	var holder *Process
	for i, p := range busy.Processes {
		t.Logf("process on GPU 0: PID %d, %d MiB, SM %d%% (process utilisation readable: %v); the load is PID %d in this namespace",
			p.PID, p.UsedMemMiB, p.SMUtilPercent, busy.Readable(FieldProcessUtil), cmd.Process.Pid)
		if p.UsedMemMiB >= 1024 {
			holder = &busy.Processes[i]
		}
	}
	if holder == nil {
		t.Errorf("no process with ≥ 1 GiB on GPU 0 while the load holds memory: %+v", busy.Processes)
	}
	if busy.PowerMilliW <= base.PowerMilliW {
		t.Errorf("power under load %d mW not above %d mW before", busy.PowerMilliW, base.PowerMilliW)
	}

	stop()
	idle := waitFor("idle", 3*time.Minute, func(s Sample) bool {
		_, idle := sampler.IdleSince(uuid)
		return idle && s.MemUsedMiB < base.MemUsedMiB+256
	})
	t.Logf("after: util %d%%, %d MiB used, %.1f W, %d processes", idle.UtilPercent, idle.MemUsedMiB, float64(idle.PowerMilliW)/1000, len(idle.Processes))
}

// BenchmarkRealGPUSample measures one full reading of every GPU through
// the real driver (docs/telemetry.md: the sampler's cost).
func BenchmarkRealGPUSample(b *testing.B) {
	inv := realInventory(b)
	ctx := context.Background()
	for b.Loop() {
		if _, err := inv.Sample(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRealGPUCalls times each NVML call the inventory makes, on GPU 0,
// to find which ones a reading's cost comes from.
func BenchmarkRealGPUCalls(b *testing.B) {
	realInventory(b)
	lib := nvml.New()
	if ret := lib.Init(); ret != nvml.SUCCESS {
		b.Fatal(ret)
	}
	defer lib.Shutdown()
	dev, ret := lib.DeviceGetHandleByIndex(0)
	if ret != nvml.SUCCESS {
		b.Fatal(ret)
	}
	set, _ := lib.EventSetCreate()
	if set != nil {
		dev.RegisterEvents(nvml.EventTypeXidCriticalError, set)
	}
	calls := []struct {
		name string
		call func() nvml.Return
	}{
		{"DeviceGetCount", func() nvml.Return { _, r := lib.DeviceGetCount(); return r }},
		{"DeviceGetHandleByIndex", func() nvml.Return { _, r := lib.DeviceGetHandleByIndex(0); return r }},
		{"GetUUID", func() nvml.Return { _, r := dev.GetUUID(); return r }},
		{"GetName", func() nvml.Return { _, r := dev.GetName(); return r }},
		{"GetMemoryInfo", func() nvml.Return { _, r := dev.GetMemoryInfo(); return r }},
		{"GetRemappedRows", func() nvml.Return { _, _, _, _, r := dev.GetRemappedRows(); return r }},
		{"GetMigMode", func() nvml.Return { _, _, r := dev.GetMigMode(); return r }},
		{"GetUtilizationRates", func() nvml.Return { _, r := dev.GetUtilizationRates(); return r }},
		{"GetTemperature", func() nvml.Return { _, r := dev.GetTemperature(nvml.TEMPERATURE_GPU); return r }},
		{"GetPowerUsage", func() nvml.Return { _, r := dev.GetPowerUsage(); return r }},
		{"GetTotalEnergyConsumption", func() nvml.Return { _, r := dev.GetTotalEnergyConsumption(); return r }},
		{"GetClockInfoSM", func() nvml.Return { _, r := dev.GetClockInfo(nvml.CLOCK_SM); return r }},
		{"GetClockInfoMem", func() nvml.Return { _, r := dev.GetClockInfo(nvml.CLOCK_MEM); return r }},
		{"GetTotalEccErrors", func() nvml.Return {
			_, r := dev.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC)
			return r
		}},
		{"GetComputeRunningProcesses", func() nvml.Return { _, r := dev.GetComputeRunningProcesses(); return r }},
		{"GetProcessUtilization", func() nvml.Return { _, r := dev.GetProcessUtilization(0); return r }},
		{"EventSetWait0", func() nvml.Return {
			if set == nil {
				return nvml.ERROR_NOT_SUPPORTED
			}
			_, r := set.Wait(0)
			return r
		}},
	}
	for _, c := range calls {
		b.Run(c.name, func(b *testing.B) {
			var last nvml.Return
			for b.Loop() {
				last = c.call()
			}
			b.ReportMetric(float64(last), "ret")
		})
	}
}

// BenchmarkRealGPUDevices measures one inventory read (what List and the
// launch path wait for) through the real driver.
func BenchmarkRealGPUDevices(b *testing.B) {
	inv := realInventory(b)
	ctx := context.Background()
	for b.Loop() {
		if _, err := inv.Devices(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
