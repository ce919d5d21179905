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
			power := 70000 + util*6200 // mW: ~70 W idle, ~690 W flat out (H100/H200 class)
			energy[i] += uint64(float64(power) * dt)
			l.Set(i, MockGPULoad{UtilPercent: util, MemUtilPercent: util / 2, PowerMilliW: power, EnergyMilliJ: energy[i], TempC: 32 + util/3})
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
