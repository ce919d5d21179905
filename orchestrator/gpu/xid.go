package gpu

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// xidEvents collects XID errors (NVML's critical-error events: GPU fell off
// the bus, double-bit ECC, page retirement, ...) without a blocking
// goroutine: the event set is drained with a zero timeout at each Sample,
// so the last XID per GPU is at most one sampling interval old. Devices
// that cannot register (drivers or mocks without events) keep FieldXID
// unread rather than reporting "no XID".
type xidEvents struct {
	set        nvml.EventSet
	registered map[string]bool   // GPU UUID → events registered
	last       map[string]uint64 // GPU UUID → last XID seen
	disabled   bool              // event sets unsupported: do not retry each Sample
}

// prepare creates the event set once. Caller holds b.mu.
func (b *nvmlInventory) xidPrepare() {
	x := &b.xid
	if x.set != nil || x.disabled {
		return
	}
	set, ret := call1(b.lib.EventSetCreate)
	if ret != nvml.SUCCESS || set == nil {
		x.disabled = true
		b.logger.Info("XID events unavailable; DCGM_FI_DEV_XID_ERRORS will not be exported", "detail", ret.Error())
		return
	}
	x.set = set
	x.registered = map[string]bool{}
	x.last = map[string]uint64{}
}

// xidRegister registers dev for XID events the first time it is seen.
func (b *nvmlInventory) xidRegister(dev nvml.Device, uuid string) {
	x := &b.xid
	if x.set == nil {
		return
	}
	if _, done := x.registered[uuid]; done {
		return
	}
	ret := call0(func() nvml.Return { return dev.RegisterEvents(nvml.EventTypeXidCriticalError, x.set) })
	x.registered[uuid] = ret == nvml.SUCCESS
}

// xidDrain reads every pending event without waiting.
func (b *nvmlInventory) xidDrain() {
	x := &b.xid
	if x.set == nil {
		return
	}
	for range 1024 { // bounded: a flood of events cannot stall sampling
		data, ret := call1(func() (nvml.EventData, nvml.Return) { return x.set.Wait(0) })
		if ret != nvml.SUCCESS {
			return
		}
		if data.EventType&nvml.EventTypeXidCriticalError == 0 || data.Device == nil {
			continue
		}
		if uuid, ret := call1(data.Device.GetUUID); ret == nvml.SUCCESS {
			x.last[uuid] = data.EventData
		}
	}
}

// xidFill sets the sample's XID reading where events are registered.
func (b *nvmlInventory) xidFill(s *Sample) {
	x := &b.xid
	if x.registered[s.UUID] {
		s.LastXID = x.last[s.UUID]
		s.Unread &^= FieldXID
	}
}

// xidClose frees the event set. Caller holds b.mu.
func (b *nvmlInventory) xidClose() {
	if b.xid.set != nil {
		call0(b.xid.set.Free)
		b.xid.set = nil
	}
}
