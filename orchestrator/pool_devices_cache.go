package orchestrator

import (
	"sync"
	"time"

	"workbench/orchestrator/gpu"
)

// DevicesMaxAge is how old an inventory read Pool.ListRecent may reuse: a
// health change shows on the home page's summary within it, while the
// page views in between cost no NVML calls.
const DevicesMaxAge = time.Second

// devicesCache keeps the last inventory read (List refreshes it).
type devicesCache struct {
	mu   sync.Mutex
	devs []gpu.Device
	at   time.Time
}

func (c *devicesCache) put(devs []gpu.Device) {
	c.mu.Lock()
	c.devs, c.at = devs, time.Now()
	c.mu.Unlock()
}

func (c *devicesCache) get() ([]gpu.Device, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.devs == nil || time.Since(c.at) > DevicesMaxAge {
		return nil, false
	}
	return c.devs, true
}
