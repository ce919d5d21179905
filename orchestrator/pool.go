package orchestrator

import (
	"context"
	"fmt"
	"sort"

	"workbench/models"
	"workbench/orchestrator/gpu"
	"workbench/orchestrator/scheduler"
)

// GPU states shown to users and in the API.
const (
	GPUFree      = "free"
	GPUInUse     = "in_use"
	GPUDrained   = "drained"
	GPUUnhealthy = "unhealthy"
)

// Pool is the GPU pool: what the inventory reports, merged with what admins
// decided (drain) and which workbench holds each GPU.
type Pool struct {
	inv     gpu.Inventory
	sampler *gpu.Sampler
	store   *models.Store
	devices devicesCache
	// tables keeps the drains, whole-GPU holders and bound units between
	// telemetry attributions until one of their tables is written
	// (listForTelemetry); placement and pages read them afresh.
	tables models.Cache[poolTables]
}

// poolTables is what the pool reads from the store to list its GPUs.
type poolTables struct {
	states   map[string]models.GPUState
	held     map[string]string
	bound    []models.UnitHolder
	unitHeld map[string]string
	// orphans are the units held by containers no record names, by unit
	// id (models.OrphanUnit).
	orphans map[string]models.OrphanUnit
}

// poolTableNames are the tables poolTables is read from.
var poolTableNames = []string{"gpu_states", "gpu_allocations", "orphan_units"}

func (p *Pool) readTables(ctx context.Context) (poolTables, error) {
	var t poolTables
	var err error
	if t.states, err = p.store.GPUStates(ctx); err != nil {
		return t, err
	}
	if t.held, err = p.store.GPUAllocations(ctx); err != nil {
		return t, err
	}
	if t.bound, err = p.store.UnitAllocations(ctx); err != nil {
		return t, err
	}
	t.unitHeld = unitHolders(t.bound)
	orphans, err := p.store.OrphanUnits(ctx)
	if err != nil {
		return t, err
	}
	t.orphans = make(map[string]models.OrphanUnit, len(orphans))
	for _, o := range orphans {
		t.orphans[o.UnitID] = o
	}
	return t, nil
}

// cachedTables is readTables kept until gpu_states or gpu_allocations is
// written (models.Cache): the sampler's attribution reads it every
// collection, and allocations change far less often. Read-only.
func (p *Pool) cachedTables(ctx context.Context) (poolTables, error) {
	return p.tables.Get(p.store, poolTableNames, func() (poolTables, error) { return p.readTables(ctx) })
}

// listForTelemetry is List for the attribution after each sampler
// collection: the inventory is read afresh (MIG layouts, health), the
// store's tables come from cachedTables, and the GPUs' histories are left
// out (attribution does not use them).
func (p *Pool) listForTelemetry(ctx context.Context) ([]PoolGPU, error) {
	devs, err := p.inv.Devices(ctx)
	if err != nil {
		return nil, fmt.Errorf("read GPU inventory: %w", err)
	}
	p.devices.put(devs)
	t, err := p.cachedTables(ctx)
	if err != nil {
		return nil, err
	}
	return p.listFrom(devs, t, false), nil
}

// NewPool builds the pool over an inventory; sampler may be nil.
func NewPool(inv gpu.Inventory, sampler *gpu.Sampler, store *models.Store) *Pool {
	return &Pool{inv: inv, sampler: sampler, store: store}
}

// PoolGPU is one whole GPU with its state in the pool. The JSON names are the
// API contract of SPEC §8.
type PoolGPU struct {
	Index        int               `json:"index"`
	UUID         string            `json:"uuid"`
	Model        string            `json:"model"`
	MemoryMiB    uint64            `json:"memory_mib"`
	State        string            `json:"state"`
	Health       string            `json:"health"`
	HealthDetail string            `json:"health_detail,omitempty"`
	WorkbenchID  string            `json:"workbench_id"`
	Simulated    bool              `json:"simulated"`
	Drained      bool              `json:"drained"`
	MIGEnabled   bool              `json:"mig_enabled"`
	MIG          []gpu.MIGInstance `json:"mig_instances,omitempty"`
	// SharedSlices > 0: an admin shares the GPU in that many slices.
	SharedSlices int `json:"shared_slices"`
	// MPS limits each slice's container gets (0 = off).
	MPSMemoryMiB     int64 `json:"mps_memory_mib,omitempty"`
	MPSThreadPercent int   `json:"mps_thread_percent,omitempty"`
	// Units are the MIG instances or slices the GPU is handed out in,
	// each with its holder; empty for a GPU handed out whole.
	Units []PoolUnit `json:"units,omitempty"`
	// Outside are the compute processes on a whole GPU no workbench holds:
	// something started outside the portal is using it (outside_use.go).
	Outside []OutsideProcess `json:"outside_processes,omitempty"`
	// Unknown is the container no workbench record names that holds the
	// GPU whole (a restored backup's orphan): in use until the orphan
	// sweep removes it.
	Unknown *UnknownHolder `json:"unknown_container,omitempty"`
	Util    *Reading       `json:"utilization,omitempty"`
	History []gpu.Sample   `json:"-"`
}

// Reading is the latest sample in API form. A field the GPU did not answer
// is null, not 0: a MIG-enabled GPU has no whole-GPU utilisation
// (NOT_SUPPORTED) but still reports its memory, temperature and power.
type Reading struct {
	UtilPercent *uint32  `json:"gpu_percent"`
	MemUsedMiB  *uint64  `json:"memory_used_mib"`
	TempC       *uint32  `json:"temperature_c"`
	PowerW      *float64 `json:"power_w"`
}

// readingOf is s in API form; nil when the GPU answered none of its fields.
func readingOf(s gpu.Sample) *Reading {
	r := &Reading{}
	if s.Readable(gpu.FieldUtil) {
		r.UtilPercent = &s.UtilPercent
	}
	if s.Readable(gpu.FieldMemory) {
		r.MemUsedMiB = &s.MemUsedMiB
	}
	if s.Readable(gpu.FieldTemp) {
		r.TempC = &s.TempC
	}
	if s.Readable(gpu.FieldPower) {
		w := float64(s.PowerMilliW) / 1000
		r.PowerW = &w
	}
	if *r == (Reading{}) {
		return nil
	}
	return r
}

// Simulated reports whether the pool is made of simulated GPUs.
func (p *Pool) Simulated() bool { return p.inv.Simulated() }

// Backend names the inventory backend.
func (p *Pool) Backend() string { return p.inv.Backend() }

// BackendKubernetes is the backend of a pool read from a cluster's nodes
// (orchestrator/runtime/kube): workbenches run as Pods there.
const BackendKubernetes = "kubernetes"

// OnKubernetes reports whether workbenches run on Kubernetes, so that what
// people read names the cluster rather than a Docker engine.
func (p *Pool) OnKubernetes() bool { return p.Backend() == BackendKubernetes }

// Status is the inventory's human status line.
func (p *Pool) Status() string { return p.inv.Status() }

// List returns every GPU with its pool state, by index.
func (p *Pool) List(ctx context.Context) ([]PoolGPU, error) {
	devs, err := p.inv.Devices(ctx)
	if err != nil {
		return nil, fmt.Errorf("read GPU inventory: %w", err)
	}
	p.devices.put(devs)
	return p.list(ctx, devs)
}

// ListRecent is List over an inventory read at most DevicesMaxAge ago, for
// pages that summarise the pool on every view (the home page's "8 GPUs,
// 7 free"): reading NVML takes the inventory's lock and a dozen driver
// calls per GPU. Drains and allocations are always read afresh; placement
// never uses this (it reads the inventory itself).
func (p *Pool) ListRecent(ctx context.Context) ([]PoolGPU, error) {
	if devs, ok := p.devices.get(); ok {
		return p.list(ctx, devs)
	}
	return p.List(ctx)
}

// ModelByUUID names each GPU's model by its UUID, from an inventory read at
// most DevicesMaxAge ago: reports that only label GPUs (the usage page's
// held-vs-used figures, on every view) need neither a fresh driver read nor
// the pool's tables.
func (p *Pool) ModelByUUID(ctx context.Context) (map[string]string, error) {
	devs, err := p.recentDevices(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(devs))
	for _, d := range devs {
		out[d.UUID] = d.Model
	}
	return out, nil
}

// GPUNames names each GPU by its UUID as people read it (GPUName), from
// an inventory read at most DevicesMaxAge ago, like ModelByUUID.
func (p *Pool) GPUNames(ctx context.Context) (map[string]string, error) {
	devs, err := p.recentDevices(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(devs))
	for _, d := range devs {
		out[d.UUID] = GPUName(d.Index, d.Model)
	}
	return out, nil
}

// MemoryMiB is each GPU's total memory by its UUID, from an inventory
// read at most DevicesMaxAge ago, like ModelByUUID.
func (p *Pool) MemoryMiB(ctx context.Context) (map[string]uint64, error) {
	devs, err := p.recentDevices(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]uint64, len(devs))
	for _, d := range devs {
		out[d.UUID] = d.MemoryMiB
	}
	return out, nil
}

// GPUName is how pages name a GPU: "GPU 3 · H100 80GB HBM3", its index on
// the host (as nvidia-smi numbers it) and its model; the UUID is for
// machines and is shown beside it, smaller.
func GPUName(index int, model string) string {
	return fmt.Sprintf("GPU %d · %s", index, models.ShortGPUName(model))
}

// recentDevices is the inventory as read at most DevicesMaxAge ago (read
// now when older).
func (p *Pool) recentDevices(ctx context.Context) ([]gpu.Device, error) {
	if devs, ok := p.devices.get(); ok {
		return devs, nil
	}
	devs, err := p.inv.Devices(ctx)
	if err != nil {
		return nil, fmt.Errorf("read GPU inventory: %w", err)
	}
	p.devices.put(devs)
	return devs, nil
}

func (p *Pool) list(ctx context.Context, devs []gpu.Device) ([]PoolGPU, error) {
	t, err := p.readTables(ctx)
	if err != nil {
		return nil, err
	}
	return p.listFrom(devs, t, true), nil
}

func (p *Pool) listFrom(devs []gpu.Device, t poolTables, withHistory bool) []PoolGPU {
	states, held, unitHeld := t.states, t.held, t.unitHeld
	out := make([]PoolGPU, 0, len(devs))
	for _, d := range devs {
		g := PoolGPU{Index: d.Index, UUID: d.UUID, Model: d.Model, MemoryMiB: d.MemoryMiB, Health: d.Health,
			HealthDetail: d.HealthDetail, Simulated: p.inv.Simulated(), MIGEnabled: d.MIGEnabled, MIG: d.MIG,
			Drained: states[d.UUID].Drained, WorkbenchID: held[d.UUID], SharedSlices: states[d.UUID].SharedSlices}
		if d.MIGEnabled {
			g.SharedSlices = 0 // MIG instances are its units
		}
		if g.SharedSlices > 0 {
			g.MPSMemoryMiB, g.MPSThreadPercent = states[d.UUID].MPSMemoryMiB, states[d.UUID].MPSThreadPercent
		}
		g.Units = poolUnits(d, states[d.UUID], unitHeld)
		if o, ok := t.orphans[d.UUID]; ok && o.Kind == models.UnitGPU {
			g.Unknown = unknownHolder(o)
		}
		for i := range g.Units {
			if o, ok := t.orphans[g.Units[i].unitID()]; ok {
				g.Units[i].Unknown = unknownHolder(o)
			}
		}
		if g.WorkbenchID != "" {
			// A shared GPU taken whole (docs/scheduling.md): its holder
			// holds every slice of it until it stops.
			for i := range g.Units {
				if g.Units[i].Kind == models.UnitSlice {
					g.Units[i].WorkbenchID = g.WorkbenchID
				}
			}
		}
		if g.Unknown != nil {
			for i := range g.Units { // as for a workbench holding it whole
				if g.Units[i].Kind == models.UnitSlice {
					g.Units[i].Unknown = g.Unknown
				}
			}
		}
		switch {
		case g.WorkbenchID != "" || g.Unknown != nil:
			g.State = GPUInUse
		case d.Health != gpu.HealthOK:
			g.State = GPUUnhealthy
		case g.Drained:
			g.State = GPUDrained
		case d.MIGEnabled:
			g.State = GPUMIG
		case g.SharedSlices > 0:
			g.State = GPUShared
		default:
			g.State = GPUFree
		}
		if p.sampler != nil {
			// Each field only as read: showing an unread utilisation's
			// zero as 0% would call a broken GPU idle.
			if s, ok := p.sampler.Latest(d.UUID); ok {
				g.Util = readingOf(s)
				g.Outside = outsideProcesses(g, s)
				migReadings(g.Units, s)
			}
			if withHistory {
				g.History = p.sampler.History(d.UUID)
			}
		}
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out
}

// Models returns the distinct GPU models in the pool.
func (p *Pool) Models(ctx context.Context) ([]string, error) {
	devs, err := p.inv.Devices(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, d := range devs {
		if !seen[d.Model] {
			seen[d.Model] = true
			out = append(out, d.Model)
		}
	}
	return out, nil
}

// SetDrained drains or undrains a GPU of the pool and records who did it.
func (p *Pool) SetDrained(ctx context.Context, uuid string, drained bool, actor string) error {
	devs, err := p.inv.Devices(ctx)
	if err != nil {
		return err
	}
	found := false
	for _, d := range devs {
		found = found || d.UUID == uuid
	}
	if !found {
		return models.ErrNotFound
	}
	action := "gpu.undrain"
	if drained {
		action = "gpu.drain"
	}
	// The change and its audit row commit together: no drain without its
	// record, no record of a drain that did not happen.
	return p.store.InTx(ctx, func(tx *models.Store) error {
		states, err := tx.GPUStates(ctx)
		if err != nil {
			return err
		}
		before := states[uuid].Drained
		if err := tx.SetGPUDrained(ctx, uuid, drained, actor, ""); err != nil {
			return err
		}
		return tx.WriteAudit(ctx, models.AuditRecord{Actor: actor, Action: action, Target: uuid,
			Before: map[string]bool{"drained": before}, After: map[string]bool{"drained": drained}})
	})
}

// CandidatesByModel lists, per GPU model, the GPUs a whole-GPU flavor of
// that model may be given (healthy, undrained, not MIG-partitioned): what
// Need picks from, for the queue's drainer.
func (p *Pool) CandidatesByModel(ctx context.Context) (map[string][]string, error) {
	devs, err := p.inv.Devices(ctx)
	if err != nil {
		return nil, fmt.Errorf("read GPU inventory: %w", err)
	}
	states, err := p.store.GPUStates(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, d := range devs {
		if d.Health == gpu.HealthOK && !states[d.UUID].Drained && !d.MIGEnabled {
			out[d.Model] = append(out[d.Model], d.UUID)
		}
	}
	return out, nil
}

// DrainedUnits counts, per scheduler pool, the units an administrator
// took out of service (drained): the queue says so of a request they hold
// up. A drained whole GPU is one unit of its model's pool; a drained shared
// GPU is its slices, in its model's slice pool (it was counted as a whole
// GPU: "3 out of service" with 2 whole GPUs drained, and a slice request
// that waited only for it was never told).
func (p *Pool) DrainedUnits(ctx context.Context) (map[scheduler.Pool]int, error) {
	devs, err := p.inv.Devices(ctx)
	if err != nil {
		return nil, fmt.Errorf("read GPU inventory: %w", err)
	}
	states, err := p.store.GPUStates(ctx)
	if err != nil {
		return nil, err
	}
	out := map[scheduler.Pool]int{}
	for _, d := range devs {
		st := states[d.UUID]
		switch {
		case d.Health != gpu.HealthOK || !st.Drained || d.MIGEnabled:
		case st.SharedSlices > 0:
			out[scheduler.PoolSlice(d.Model)] += st.SharedSlices
		default:
			out[scheduler.PoolGPU(d.Model)]++
		}
	}
	return out, nil
}

// FreeSummary names what is free, for refusal messages: "free now: 3 × H100" (a reason of its own: the caller joins it with "; ").
func (p *Pool) FreeSummary(ctx context.Context) string {
	gpus, err := p.List(ctx)
	if err != nil {
		return "" // the refusal goes without it
	}
	count := map[string]int{}
	var order []string
	for _, g := range gpus {
		if g.State == GPUFree {
			if count[g.Model] == 0 {
				order = append(order, g.Model)
			}
			count[g.Model]++
		}
	}
	if len(order) == 0 {
		return reasonf("no GPU is free right now")
	}
	s := ""
	for i, m := range order {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%d × %s", count[m], m)
	}
	return reasonf("free now: %s", s)
}
