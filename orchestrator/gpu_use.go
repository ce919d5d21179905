package orchestrator

import (
	"context"
	"sort"
	"strings"
	"sync"

	"workbench/models"
	"workbench/orchestrator/gpu"
)

// GPUUse is one GPU with its latest telemetry and whom its figures belong to.
type GPUUse struct {
	Index     int
	UUID      string
	Model     string
	MIG       []gpu.MIGInstance
	Sample    gpu.Sample
	HasSample bool
	// Holder is the workbench the pool gave the whole GPU to (empty when
	// free); for whole GPUs, the GPU's figures are the holder's.
	Holder Holder
	// Processes are the compute processes on the GPU, each traced through
	// its cgroup to a container and so to a workbench.
	Processes []ProcessUse
	// Units are the GPU's MIG instances (held or not) and the holders of
	// its shared slices, each with its own figures (unit_use.go).
	Units []UnitUse
}

// Holder names a workbench and its owner, as metric labels use them.
type Holder struct {
	WorkbenchID string
	User        string
	Group       string // the owner's groups, sorted, comma-separated
}

// ProcessUse is one GPU process and the workbench it runs in ("" when its
// container is none of ours, or it is in no container).
type ProcessUse struct {
	PID        uint32
	UsedMemMiB uint64
	// SMUtilPercent is the process's own SM utilisation; meaningful only
	// where the GPU's sample has gpu.FieldProcessUtil readable.
	SMUtilPercent uint32
	ContainerID   string
	Holder        Holder
}

// GPUUse attributes every GPU's latest sample: the pool's holder for the
// whole GPU, and each compute process to its workbench through
// /proc/PID/cgroup and the container ids the manager recorded.
//
// It runs after every sampler collection, so what it reads is kept
// between calls: the store's allocations and the active workbenches with
// their owners until one of their tables is written (models.Cache), and
// each process's container until the PID leaves the GPUs' process lists
// (pidContainerCache).
func (m *Manager) GPUUse(ctx context.Context) ([]GPUUse, error) {
	gpus, err := m.pool.listForTelemetry(ctx)
	if err != nil {
		return nil, err
	}
	a, err := m.currentAttribution(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]GPUUse, 0, len(gpus))
	pids := m.pidContainers.begin()
	defer m.pidContainers.end(pids)
	for _, g := range gpus {
		u := GPUUse{Index: g.Index, UUID: g.UUID, Model: g.Model, MIG: g.MIG}
		u.Holder = a.holderOf(g.WorkbenchID)
		if m.pool.sampler != nil {
			u.Sample, u.HasSample = m.pool.sampler.Latest(g.UUID)
		}
		if len(u.Sample.Processes) > 0 {
			u.Processes = make([]ProcessUse, 0, len(u.Sample.Processes))
		}
		for _, p := range u.Sample.Processes {
			pu := ProcessUse{PID: p.PID, UsedMemMiB: p.UsedMemMiB, SMUtilPercent: p.SMUtilPercent,
				ContainerID: pids.container(p.PID, a)}
			if w := matchContainer(a.byContainer, pu.ContainerID); w != nil {
				pu.Holder = a.holders[w.ID]
			}
			u.Processes = append(u.Processes, pu)
		}
		u.Units = unitUses(g, u, a)
		out = append(out, u)
	}
	return out, nil
}

// attribution is the store's side of GPUUse: the active workbenches by id
// and by container, and each one's Holder (owner name and groups). Shared
// between callers: read-only once built.
type attribution struct {
	byContainer map[string]*models.Workbench
	holders     map[string]Holder // by workbench id
}

// attributionTables are the tables attribution is read from: workbench
// states and containers, owners' names, group names and memberships.
var attributionTables = []string{"workbenches", "users", "groups", "group_members"}

// currentAttribution is the attribution as of the store's last write to
// its tables (read afresh when one was written).
func (m *Manager) currentAttribution(ctx context.Context) (*attribution, error) {
	return m.attribution.Get(m.store, attributionTables, func() (*attribution, error) { return m.loadAttribution(ctx) })
}

func (m *Manager) loadAttribution(ctx context.Context) (*attribution, error) {
	active, err := m.store.ListWorkbenches(ctx, 0, models.ActiveStates...)
	if err != nil {
		return nil, err
	}
	a := &attribution{byContainer: map[string]*models.Workbench{}, holders: make(map[string]Holder, len(active))}
	owners := map[int64][2]string{}
	for i := range active {
		w := &active[i]
		if w.ContainerID != "" {
			a.byContainer[w.ContainerID] = w
		}
		ug, ok := owners[w.OwnerID]
		if !ok {
			if u, err := m.store.UserByID(ctx, w.OwnerID); err == nil {
				ug[0] = u.Username
			}
			if gs, err := m.store.UserGroups(ctx, w.OwnerID); err == nil {
				sort.Strings(gs)
				ug[1] = strings.Join(gs, ",")
			}
			owners[w.OwnerID] = ug
		}
		a.holders[w.ID] = Holder{WorkbenchID: w.ID, User: ug[0], Group: ug[1]}
	}
	return a, nil
}

// holderOf is the Holder of an active workbench; empty for "" or a
// workbench that is not active.
func (a *attribution) holderOf(id string) Holder {
	if id == "" {
		return Holder{}
	}
	return a.holders[id]
}

// matchContainer finds the workbench of a full container id; the record
// may hold a full or a short id.
func matchContainer(byContainer map[string]*models.Workbench, id string) *models.Workbench {
	if id == "" {
		return nil
	}
	if w := byContainer[id]; w != nil {
		return w
	}
	for cid, w := range byContainer {
		if len(cid) >= 12 && strings.HasPrefix(id, cid) {
			return w
		}
	}
	return nil
}

// pidContainerCache keeps the container of each GPU process between
// attributions: /proc/PID/cgroup is read once, when NVML first lists the
// PID. An entry is dropped when an attribution no longer finds its PID in
// any GPU's process list (so a PID that ends and is reused by another
// container is read afresh when it reappears), and is read again when the
// container it named is no longer an active workbench's (a workbench
// stopped: a reused PID must not keep its attribution).
type pidContainerCache struct {
	mu  sync.Mutex
	ids map[uint32]pidContainer
}

// pidContainer is a PID's container, and the attribution (workbench
// snapshot) it was last checked against.
type pidContainer struct {
	id      string
	checked *attribution
}

// pidPass is one attribution's use of the cache.
type pidPass struct {
	c    *pidContainerCache
	seen map[uint32]bool
}

func (c *pidContainerCache) begin() *pidPass {
	c.mu.Lock()
	if c.ids == nil {
		c.ids = map[uint32]pidContainer{}
	}
	return &pidPass{c: c}
}

// container is the container id of pid ("" for none), read from its
// cgroup the first time the PID is seen and whenever the workbenches
// changed and the container is not an active workbench's.
func (p *pidPass) container(pid uint32, a *attribution) string {
	if p.seen == nil {
		p.seen = map[uint32]bool{}
	}
	p.seen[pid] = true
	e, ok := p.c.ids[pid]
	if ok && e.checked == a {
		return e.id
	}
	// Seen before, but the workbenches changed since: keep the container
	// only if it is still an active workbench's; else (its workbench
	// stopped, or it was none of ours and a new one may now own it)
	// read the cgroup again.
	if ok && e.id != "" && matchContainer(a.byContainer, e.id) != nil {
		p.c.ids[pid] = pidContainer{id: e.id, checked: a}
		return e.id
	}
	id := containerOfPID(pid)
	p.c.ids[pid] = pidContainer{id: id, checked: a}
	return id
}

// end drops the PIDs this pass did not see and releases the cache.
func (c *pidContainerCache) end(p *pidPass) {
	for pid := range c.ids {
		if !p.seen[pid] {
			delete(c.ids, pid)
		}
	}
	c.mu.Unlock()
}
