package gpu

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// NewLiveMock builds the named go-nvml mock server (stable UUIDs, as mode
// "mock:X") with MockLoad attached, for `make demo` and tests that want a
// simulated pool whose GPUs report load.
func NewLiveMock(name string) (nvml.Interface, *MockLoad, error) {
	lib, err := newMockServer(name)
	if err != nil {
		return nil, nil, err
	}
	srv, ok := lib.(*server.Server)
	if !ok {
		return nil, nil, fmt.Errorf("mock %q is not a go-nvml mock server", name)
	}
	return srv, AttachMockLoad(srv), nil
}

// RunDemo drives a simulated pool with a made-up but plausible pattern
// until ctx ends: odd GPUs work (utilisation swinging between ~40% and
// ~95%, power following it), even GPUs idle at 0–3%; the energy counter
// integrates the power. Only for simulated pools (`make demo`).
func (l *MockLoad) RunDemo(ctx context.Context, every time.Duration) {
	energy := make([]uint64, len(l.gpus))
	start := time.Now()
	last := start
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		now := time.Now()
		dt := now.Sub(last).Seconds()
		last = now
		phase := now.Sub(start).Seconds() / 60
		for i := range l.gpus {
			util := uint32(math.Mod(float64(i)*7+phase*10, 4))
			if i%2 == 1 {
				util = uint32(67 + 28*math.Sin(phase+float64(i)))
			}
			mean, mig := l.demoMIG(i, phase)
			if mig {
				util = mean // a MIG GPU draws for its instances' work
			}
			power := 70000 + util*6200 // mW: ~70 W idle, ~690 W flat out (H100/H200 class)
			energy[i] += uint64(float64(power) * dt)
			// Memory follows the work as on the MIG instances: 10 % held
			// when idle, up to 90 % flat out.
			used := l.totalMiB(i) * uint64(10+util*8/10) / 100
			g := MockGPULoad{UtilPercent: util, MemUtilPercent: util / 2, MemUsedMiB: used, PowerMilliW: power, EnergyMilliJ: energy[i], TempC: 32 + util/3}
			if i%2 == 1 && !mig {
				// The work on a busy GPU is one compute process, as NVML
				// lists it: on a GPU no workbench holds, the pool shows it
				// as used outside the portal.
				g.Processes = []Process{{PID: uint32(41000 + i), UsedMemMiB: used - l.totalMiB(i)/10}}
			}
			l.Set(i, g)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// DriveMIG makes RunDemo give the MIG instances of h (which must wrap
// this load's mock) per-instance readings: utilisation (as drivers that
// answer it per instance) and memory.
func (l *MockLoad) DriveMIG(h *MockMIGHandles) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mig = h
}

// demoMIG sets the readings of GPU i's MIG instances, if it has any:
// instance k works (40–95%) when k is odd, idles (0–3%) otherwise, its
// memory following its utilisation. It returns the instances' mean
// utilisation weighted by compute slices, for the GPU's power.
func (l *MockLoad) demoMIG(i int, phase float64) (uint32, bool) {
	l.mu.Lock()
	h := l.mig
	l.mu.Unlock()
	if h == nil {
		return 0, false
	}
	d, ret := h.DeviceGetHandleByIndex(i)
	mc, ok := d.(migCapable)
	if ret != nvml.SUCCESS || !ok {
		return 0, false
	}
	hs := mc.migHandles()
	if len(hs) == 0 {
		return 0, false
	}
	var sum, slices uint32
	for k, m := range hs {
		util := uint32(math.Mod(float64(k)*3+phase*10, 4))
		if k%2 == 1 {
			util = uint32(67 + 28*math.Sin(phase+float64(k)))
		}
		h.SetUtil(m.uuid, util, util/2)
		h.SetMemUsed(m.uuid, uint64(m.attrs.MemorySizeMB)*uint64(10+util*8/10)/100)
		n := max(m.attrs.ComputeInstanceSliceCount, 1)
		sum += util * n
		slices += n
	}
	return sum / max(slices, 7), true
}
