package gpu

import (
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// MockLoad gives go-nvml's mock servers "life": the stock mocks answer no
// utilisation, power, energy or process queries, so tests (and a demo)
// set per-GPU readings here and the wrapped devices report them,
// deterministically. A GPU marked Fail answers every telemetry query with
// ERROR_UNKNOWN, to exercise "could not read". Safe for concurrent use.
type MockLoad struct {
	mu     sync.Mutex
	gpus   []MockGPULoad
	devs   []nvml.Device
	events []nvml.EventData // XID events not yet read
	mig    *MockMIGHandles  // per-instance readings RunDemo drives (DriveMIG)
}

// MockGPULoad is what one mock GPU reports.
type MockGPULoad struct {
	UtilPercent, MemUtilPercent uint32
	// MemUsedMiB is the memory in use, capped at the GPU's; the rest of
	// the mock's total is reported free (the stock mock reports 0 used
	// and 0 free, a GPU of no memory).
	MemUsedMiB   uint64
	PowerMilliW  uint32
	EnergyMilliJ uint64
	TempC        uint32
	Processes    []Process
	Fail         bool
	// EnergyUnread: only the total-energy counter fails (ERROR_UNKNOWN),
	// as on drivers or GPUs that do not keep it.
	EnergyUnread bool
}

// AttachMockLoad installs the load functions on every device of srv and
// returns the handle that sets their readings (all zero, readable, at
// first).
func AttachMockLoad(srv *server.Server) *MockLoad {
	l := &MockLoad{gpus: make([]MockGPULoad, len(srv.Devices)), devs: srv.Devices}
	srv.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) {
		return &mock.EventSet{
			WaitFunc: func(uint32) (nvml.EventData, nvml.Return) {
				l.mu.Lock()
				defer l.mu.Unlock()
				if len(l.events) == 0 {
					return nvml.EventData{}, nvml.ERROR_TIMEOUT
				}
				e := l.events[0]
				l.events = l.events[1:]
				return e, nvml.SUCCESS
			},
			FreeFunc: func() nvml.Return { return nvml.SUCCESS },
		}, nvml.SUCCESS
	}
	for i, d := range srv.Devices {
		dev, ok := d.(*server.Device)
		if !ok {
			continue
		}
		i := i
		dev.RegisterEventsFunc = func(uint64, nvml.EventSet) nvml.Return { return nvml.SUCCESS }
		dev.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			// As real NVML: a MIG-enabled GPU has no whole-GPU utilisation.
			if cur, _, ret := dev.GetMigMode(); ret == nvml.SUCCESS && cur == nvml.DEVICE_MIG_ENABLE {
				return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED
			}
			g, ret := l.get(i)
			return nvml.Utilization{Gpu: g.UtilPercent, Memory: g.MemUtilPercent}, ret
		}
		dev.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
			g, ret := l.get(i)
			if ret != nvml.SUCCESS {
				return nvml.Memory{}, ret
			}
			total := dev.MemoryInfo.Total
			used := min(g.MemUsedMiB*mib, total)
			return nvml.Memory{Total: total, Used: used, Free: total - used}, nvml.SUCCESS
		}
		dev.GetPowerUsageFunc = func() (uint32, nvml.Return) {
			g, ret := l.get(i)
			return g.PowerMilliW, ret
		}
		dev.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) {
			g, ret := l.get(i)
			if g.EnergyUnread {
				return 0, nvml.ERROR_UNKNOWN
			}
			return g.EnergyMilliJ, ret
		}
		dev.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) {
			g, ret := l.get(i)
			return g.TempC, ret
		}
		dev.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
			g, ret := l.get(i)
			var out []nvml.ProcessInfo
			for _, p := range g.Processes {
				out = append(out, nvml.ProcessInfo{Pid: p.PID, UsedGpuMemory: p.UsedMemMiB * mib})
			}
			return out, ret
		}
		dev.GetProcessUtilizationFunc = func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
			g, ret := l.get(i)
			if ret != nvml.SUCCESS {
				return nil, ret
			}
			if len(g.Processes) == 0 {
				return nil, nvml.ERROR_NOT_FOUND // as NVML: no process samples
			}
			var out []nvml.ProcessUtilizationSample
			for _, p := range g.Processes {
				out = append(out, nvml.ProcessUtilizationSample{Pid: p.PID, TimeStamp: 1, SmUtil: p.SMUtilPercent})
			}
			return out, nvml.SUCCESS
		}
	}
	return l
}

// Set replaces what GPU index reports.
func (l *MockLoad) Set(index int, g MockGPULoad) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gpus[index] = g
}

// XID queues an XID critical-error event for GPU index, as the driver
// would report it (e.g. 79: fallen off the bus, 48: double-bit ECC).
func (l *MockLoad) XID(index int, xid uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, nvml.EventData{Device: l.devs[index], EventType: nvml.EventTypeXidCriticalError, EventData: xid})
}

// totalMiB is GPU index's memory as the mock server holds it.
func (l *MockLoad) totalMiB(index int) uint64 {
	if dev, ok := l.devs[index].(*server.Device); ok {
		return dev.MemoryInfo.Total / mib
	}
	return 0
}

func (l *MockLoad) get(i int) (MockGPULoad, nvml.Return) {
	l.mu.Lock()
	defer l.mu.Unlock()
	g := l.gpus[i]
	if g.Fail {
		return MockGPULoad{}, nvml.ERROR_UNKNOWN
	}
	return g, nvml.SUCCESS
}
