package gpu

import (
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// MockLoad gives go-nvml's mock servers "life": the stock mocks answer no
// utilisation, power, energy or process queries, so tests (and a demo)
// set per-GPU readings here and the wrapped devices report them,
// deterministically. A GPU marked Fail answers every telemetry query with
// ERROR_UNKNOWN, to exercise "could not read". Safe for concurrent use.
type MockLoad struct {
	mu   sync.Mutex
	gpus []MockGPULoad
}

// MockGPULoad is what one mock GPU reports.
type MockGPULoad struct {
	UtilPercent, MemUtilPercent uint32
	PowerMilliW                 uint32
	EnergyMilliJ                uint64
	TempC                       uint32
	Processes                   []Process
	Fail                        bool
}

// AttachMockLoad installs the load functions on every device of srv and
// returns the handle that sets their readings (all zero, readable, at
// first).
func AttachMockLoad(srv *server.Server) *MockLoad {
	l := &MockLoad{gpus: make([]MockGPULoad, len(srv.Devices))}
	for i, d := range srv.Devices {
		dev, ok := d.(*server.Device)
		if !ok {
			continue
		}
		i := i
		dev.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			g, ret := l.get(i)
			return nvml.Utilization{Gpu: g.UtilPercent, Memory: g.MemUtilPercent}, ret
		}
		dev.GetPowerUsageFunc = func() (uint32, nvml.Return) {
			g, ret := l.get(i)
			return g.PowerMilliW, ret
		}
		dev.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) {
			g, ret := l.get(i)
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
	}
	return l
}

// Set replaces what GPU index reports.
func (l *MockLoad) Set(index int, g MockGPULoad) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.gpus[index] = g
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
