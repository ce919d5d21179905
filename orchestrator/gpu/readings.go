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
		s.Unread |= FieldProcesses | FieldProcessUtil
	}
	// Per-process utilisation only where there are processes to give it
	// to: on a real H200 the call costs ~2.4 ms (the whole rest of a
	// reading but the energy counter costs ~0.1 ms; docs/telemetry.md),
	// and an idle GPU has nobody to attribute it to.
	if s.Readable(FieldProcesses) && len(s.Processes) > 0 {
		readProcessUtil(dev, &s)
	}
	if migEnabled(dev) {
		s.MIG = readMIG(dev)
	}
	return s
}

// readProcessUtil fills each process's SM utilisation from
// GetProcessUtilization, taking the newest sample NVML keeps per PID.
// ERROR_NOT_FOUND means NVML has no utilisation sample for any process in
// its buffer: none of them used the SMs, a readable 0%. Any other failure
// leaves per-process utilisation unread.
func readProcessUtil(dev nvml.Device, s *Sample) {
	us, ret := call1(func() ([]nvml.ProcessUtilizationSample, nvml.Return) { return dev.GetProcessUtilization(0) })
	switch ret {
	case nvml.SUCCESS:
	case nvml.ERROR_NOT_FOUND:
		return
	default:
		s.Unread |= FieldProcessUtil
		return
	}
	type newest struct {
		at uint64
		sm uint32
	}
	byPID := map[uint32]newest{}
	for _, u := range us {
		if n, ok := byPID[u.Pid]; !ok || u.TimeStamp >= n.at {
			byPID[u.Pid] = newest{at: u.TimeStamp, sm: u.SmUtil}
		}
	}
	for i := range s.Processes {
		s.Processes[i].SMUtilPercent = byPID[s.Processes[i].PID].sm
	}
}

// readMIG reads every MIG instance of a MIG-enabled GPU through its MIG
// device handle: memory (per instance on every driver) and utilisation
// (unread where the driver does not answer it per instance, the usual
// case). Without MIG device handles (go-nvml's stock mocks) it returns
// nothing: the instances then have no reading at all.
func readMIG(dev nvml.Device) []MIGSample {
	n, ret := call1(dev.GetMaxMigDeviceCount)
	if ret != nvml.SUCCESS {
		return nil
	}
	var out []MIGSample
	for i := 0; i < n; i++ {
		h, ret := call1(func() (nvml.Device, nvml.Return) { return dev.GetMigDeviceHandleByIndex(i) })
		if ret != nvml.SUCCESS || h == nil {
			continue // an empty slot: NVML answers NOT_FOUND
		}
		uuid, ret := call1(h.GetUUID)
		if ret != nvml.SUCCESS || uuid == "" {
			continue
		}
		m := MIGSample{UUID: uuid, GPUInstanceID: -1}
		if gi, ret := call1(h.GetGpuInstanceId); ret == nvml.SUCCESS {
			m.GPUInstanceID = gi
		}
		if u, ret := call1(h.GetUtilizationRates); ret == nvml.SUCCESS {
			m.UtilPercent, m.MemUtilPercent = u.Gpu, u.Memory
		} else {
			m.Unread |= FieldUtil | FieldMemUtil
		}
		if mem, ret := call1(h.GetMemoryInfo); ret == nvml.SUCCESS {
			m.MemUsedMiB, m.MemFreeMiB = mem.Used/mib, mem.Free/mib
		} else {
			m.Unread |= FieldMemory
		}
		out = append(out, m)
	}
	return out
}
