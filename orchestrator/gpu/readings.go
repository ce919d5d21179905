package gpu

import (
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// readSample takes one reading of every telemetry field of dev. Each NVML
// call that does not succeed marks its field unread instead of leaving a
// zero that would look like an idle GPU. MIG-enabled GPUs, for example,
// answer NOT_SUPPORTED for whole-GPU utilisation: their utilisation is
// unknown, not 0%.
func readSample(dev nvml.Device, uuid string, now time.Time) Sample {
	// XID events come from an event set, not a point query; Sample fills
	// them in where it has one (xid.go).
	s := Sample{UUID: uuid, At: now, Unread: FieldXID}
	if u, ret := call1(dev.GetUtilizationRates); ret == nvml.SUCCESS {
		s.UtilPercent, s.MemUtilPercent = u.Gpu, u.Memory
	} else {
		s.Unread |= FieldUtil | FieldMemUtil
	}
	if m, ret := call1(dev.GetMemoryInfo); ret == nvml.SUCCESS {
		s.MemUsedMiB, s.MemFreeMiB = m.Used/mib, m.Free/mib
	} else {
		s.Unread |= FieldMemory
	}
	// GetTemperature is deprecated in NVML 13 headers but present in
	// every driver; its successor GetTemperatureV is missing from older
	// (e.g. 535/550) drivers still common on GPU servers.
	if t, ret := call1(func() (uint32, nvml.Return) { return dev.GetTemperature(nvml.TEMPERATURE_GPU) }); ret == nvml.SUCCESS {
		s.TempC = t
	} else {
		s.Unread |= FieldTemp
	}
	if p, ret := call1(dev.GetPowerUsage); ret == nvml.SUCCESS {
		s.PowerMilliW = p
	} else {
		s.Unread |= FieldPower
	}
	if e, ret := call1(dev.GetTotalEnergyConsumption); ret == nvml.SUCCESS {
		s.EnergyMilliJ = e
	} else {
		s.Unread |= FieldEnergy
	}
	if c, ret := call1(func() (uint32, nvml.Return) { return dev.GetClockInfo(nvml.CLOCK_SM) }); ret == nvml.SUCCESS {
		s.SMClockMHz = c
	} else {
		s.Unread |= FieldSMClock
	}
	if c, ret := call1(func() (uint32, nvml.Return) { return dev.GetClockInfo(nvml.CLOCK_MEM) }); ret == nvml.SUCCESS {
		s.MemClockMHz = c
	} else {
		s.Unread |= FieldMemClock
	}
	if n, ret := call1(func() (uint64, nvml.Return) {
		return dev.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC)
	}); ret == nvml.SUCCESS {
		s.ECCUncorrected = n
	} else {
		s.Unread |= FieldECC
	}
	if ps, ret := call1(dev.GetComputeRunningProcesses); ret == nvml.SUCCESS {
		for _, p := range ps {
			s.Processes = append(s.Processes, Process{PID: p.Pid, UsedMemMiB: p.UsedGpuMemory / mib})
		}
	} else {
		s.Unread |= FieldProcesses
	}
	return s
}
