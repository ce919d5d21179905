package gpu

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvlib/pkg/nvlib/device"
	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// errClosed is returned after Close: once NVML is shut down (and the
// library possibly unloaded) its functions must not be called again.
var errClosed = errors.New("gpu inventory is closed")

const mib = 1024 * 1024

// skippedModels are display adapters NVML lists on DGX Stations; they are
// not compute GPUs (same list go-nvlib skips).
var skippedModels = map[string]bool{"DGX Display": true, "NVIDIA DGX Display": true}

// nvmlInventory serves real NVML and go-nvml mocks alike: both are an
// nvml.Interface.
type nvmlInventory struct {
	// mu serialises every NVML call: the mock servers keep plain maps and
	// counters without locking everywhere, and real NVML loses nothing by
	// being called from one goroutine at a time at this polling rate.
	// Sample holds it one GPU at a time (a real GPU's reading takes 4–7
	// ms), so that Devices waits for one or two GPUs, not the collection.
	mu sync.Mutex
	// sampling serialises Samples, whose XID event state spans the GPUs.
	sampling sync.Mutex
	lib      nvml.Interface
	devlib   device.Interface
	closed   bool

	backend   string
	simulated bool
	label     string // "NVML", or what is simulated: "DGX H100", "mock:dgxh100"
	driver    string
	logger    *slog.Logger
	seen      transitions // last health / MIG error per GPU, to log changes only
	xid       xidEvents   // XID error events, drained at each Sample (xid.go)
}

func newNVMLInventory(lib nvml.Interface, backend string, simulated bool, label string, logger *slog.Logger) (*nvmlInventory, error) {
	b := &nvmlInventory{
		lib:       lib,
		devlib:    device.New(lib),
		backend:   backend,
		simulated: simulated,
		label:     label,
		logger:    logger.With("component", "gpu", "backend", backend),
	}
	if v, ret := call1(lib.SystemGetDriverVersion); ret == nvml.SUCCESS {
		b.driver = v
	}
	b.logger.Info("GPU inventory ready", "status", b.Status(), "simulated", simulated)
	return b, nil
}

func (b *nvmlInventory) Simulated() bool { return b.simulated }
func (b *nvmlInventory) Backend() string { return b.backend }

// Status is the inventory's line for the pool page and the logs, worded
// with reasonf so that pages show it in the reader's language.
func (b *nvmlInventory) Status() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return reasonf("GPU inventory (%s) closed", b.label)
	}
	driver := b.driver
	if driver == "" {
		driver = "unknown"
	}
	count, ret := call1(b.lib.DeviceGetCount)
	switch {
	case ret != nvml.SUCCESS:
		return reasonf("GPU inventory (%s): cannot count GPUs: %v", b.label, ret)
	case b.simulated && count == 1:
		return reasonf("simulated GPUs (%s; go-nvml mock, driver %s), 1 GPU", b.label, driver)
	case b.simulated:
		return reasonf("simulated GPUs (%s; go-nvml mock, driver %s), %d GPUs", b.label, driver, count)
	case count == 1:
		return reasonf("NVML, driver %s, 1 GPU", driver)
	default:
		return reasonf("NVML, driver %s, %d GPUs", driver, count)
	}
}

// reasonf words a text people read (a status line, a reason for having no
// GPUs): its format is a key of the reasons catalog, which translates it
// on the pages (templates/i18n.Reason; a handlers test checks every format
// is there). It is models.Reasonf's twin: this package stays a leaf that
// does not pull in the database layer for a Sprintf.
func reasonf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// Close shuts NVML down exactly once; New initialised it exactly once.
func (b *nvmlInventory) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	b.xidClose()
	if ret := call0(b.lib.Shutdown); ret != nvml.SUCCESS && ret != nvml.ERROR_NOT_SUPPORTED {
		return fmt.Errorf("NVML shutdown: %v", ret)
	}
	return nil
}

// handles walks the GPUs by NVML index. A GPU whose handle or UUID cannot
// be read is skipped with a WARN: everything downstream (device requests,
// database rows, billing) addresses GPUs by UUID, so there is nothing to
// report it under. Caller holds b.mu.
func (b *nvmlInventory) handles(ctx context.Context, visit func(i int, dev nvml.Device, uuid string)) error {
	if b.closed {
		return errClosed
	}
	count, ret := call1(b.lib.DeviceGetCount)
	if ret != nvml.SUCCESS {
		return fmt.Errorf("NVML device count: %v", ret)
	}
	for i := 0; i < count; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		dev, ret := call1(func() (nvml.Device, nvml.Return) { return b.lib.DeviceGetHandleByIndex(i) })
		if ret != nvml.SUCCESS {
			b.warnChange(fmt.Sprintf("index:%d", i), fmt.Sprintf("cannot get handle: %v", ret), "GPU skipped", "index", i)
			continue
		}
		uuid, ret := call1(dev.GetUUID)
		if ret != nvml.SUCCESS || uuid == "" {
			b.warnChange(fmt.Sprintf("index:%d", i), fmt.Sprintf("cannot read UUID: %v", ret), "GPU skipped", "index", i)
			continue
		}
		b.seen.set(fmt.Sprintf("index:%d", i), "")
		visit(i, dev, uuid)
	}
	return nil
}

func (b *nvmlInventory) Devices(ctx context.Context) ([]Device, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := []Device{}
	err := b.handles(ctx, func(i int, dev nvml.Device, uuid string) {
		d := Device{Index: i, UUID: uuid}
		var problems []string
		if name, ret := call1(dev.GetName); ret == nvml.SUCCESS {
			d.Model = name
		} else {
			problems = append(problems, fmt.Sprintf("name: %v", ret))
		}
		if skippedModels[d.Model] {
			return
		}
		mem, ret := call1(dev.GetMemoryInfo)
		if ret == nvml.SUCCESS {
			d.MemoryMiB = mem.Total / mib
		} else {
			problems = append(problems, fmt.Sprintf("memory info: %v", ret))
		}
		d.MIGEnabled = migEnabled(dev)
		if d.MIGEnabled {
			migs, err := b.listMIG(dev, uuid, mem.Total)
			if err != nil {
				b.warnChange("mig:"+uuid, err.Error(), "cannot list MIG instances", "uuid", uuid)
			} else {
				b.seen.set("mig:"+uuid, "")
			}
			d.MIG = migs
		}
		d.Health, d.HealthDetail = deviceHealth(dev, problems)
		b.noteHealth(d)
		out = append(out, d)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Sample reads the telemetry of every whole GPU (see readSample). It
// takes the NVML lock for one GPU's reading at a time: on a real H200 a
// reading takes 4–7 ms (docs/telemetry.md), and Devices (the pool page, a
// launch) would otherwise wait for all of a server's GPUs.
func (b *nvmlInventory) Sample(ctx context.Context) ([]Sample, error) {
	b.sampling.Lock()
	defer b.sampling.Unlock()
	now := time.Now()
	var gpus []gpuHandle
	b.mu.Lock()
	if !b.closed {
		b.xidPrepare()
	}
	err := b.handles(ctx, func(_ int, dev nvml.Device, uuid string) {
		b.xidRegister(dev, uuid)
		gpus = append(gpus, gpuHandle{dev, uuid})
	})
	b.mu.Unlock()
	var out []Sample
	if err == nil {
		out, err = b.readEach(ctx, gpus, now)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.xidDrain()
	}
	for i := range out {
		b.xidFill(&out[i])
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// gpuHandle is one GPU as handles found it.
type gpuHandle struct {
	dev  nvml.Device
	uuid string
}

// readEach reads gpus in order, taking the NVML lock for each reading.
func (b *nvmlInventory) readEach(ctx context.Context, gpus []gpuHandle, now time.Time) ([]Sample, error) {
	out := make([]Sample, 0, len(gpus))
	for _, g := range gpus {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		b.mu.Lock()
		closed := b.closed // handles are invalid once NVML is shut down
		if !closed {
			out = append(out, readSample(g.dev, g.uuid, now))
		}
		b.mu.Unlock()
		if closed {
			return out, errClosed
		}
	}
	return out, nil
}

// migEnabled reads the current (not pending) MIG mode; GPUs without MIG
// answer NOT_SUPPORTED, which means disabled.
func migEnabled(dev nvml.Device) bool {
	type mode struct{ current, pending int }
	m, ret := call1(func() (mode, nvml.Return) {
		c, p, ret := dev.GetMigMode()
		return mode{c, p}, ret
	})
	return ret == nvml.SUCCESS && m.current == nvml.DEVICE_MIG_ENABLE
}

// warnChange logs msg for key only when it differs from the last one, so a
// GPU that stays broken does not flood the log at every poll.
func (b *nvmlInventory) warnChange(key, detail, msg string, args ...any) {
	if b.seen.set(key, detail) {
		b.logger.Warn(msg, append(args, "detail", detail)...)
	}
}

// noteHealth logs health transitions (and an unhealthy first sighting).
func (b *nvmlInventory) noteHealth(d Device) {
	val := d.Health + "|" + d.HealthDetail
	prev, known := b.seen.get("health:" + d.UUID)
	if !b.seen.set("health:"+d.UUID, val) {
		return
	}
	switch {
	case d.Health != HealthOK:
		b.logger.Warn("GPU unhealthy", "uuid", d.UUID, "index", d.Index, "detail", d.HealthDetail)
	case known && !strings.HasPrefix(prev, HealthOK+"|"):
		b.logger.Info("GPU healthy again", "uuid", d.UUID, "index", d.Index)
	}
}
