package orchestrator

import (
	"context"
	"sort"
	"strings"

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
func (m *Manager) GPUUse(ctx context.Context) ([]GPUUse, error) {
	gpus, err := m.pool.List(ctx)
	if err != nil {
		return nil, err
	}
	active, err := m.store.ListWorkbenches(ctx, 0, models.ActiveStates...)
	if err != nil {
		return nil, err
	}
	byID := map[string]*models.Workbench{}
	byContainer := map[string]*models.Workbench{}
	for i := range active {
		w := &active[i]
		byID[w.ID] = w
		if w.ContainerID != "" {
			byContainer[w.ContainerID] = w
		}
	}
	holders := holderCache{m: m, ctx: ctx, byOwner: map[int64][2]string{}}
	out := make([]GPUUse, 0, len(gpus))
	for _, g := range gpus {
		u := GPUUse{Index: g.Index, UUID: g.UUID, Model: g.Model, MIG: g.MIG}
		if w := byID[g.WorkbenchID]; w != nil {
			u.Holder = holders.of(w)
		}
		if m.pool.sampler != nil {
			u.Sample, u.HasSample = m.pool.sampler.Latest(g.UUID)
		}
		for _, p := range u.Sample.Processes {
			pu := ProcessUse{PID: p.PID, UsedMemMiB: p.UsedMemMiB, SMUtilPercent: p.SMUtilPercent, ContainerID: containerOfPID(p.PID)}
			if w := matchContainer(byContainer, pu.ContainerID); w != nil {
				pu.Holder = holders.of(w)
			}
			u.Processes = append(u.Processes, pu)
		}
		u.Units = unitUses(g, u, byID, &holders)
		out = append(out, u)
	}
	return out, nil
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

// holderCache looks each owner up once per attribution.
type holderCache struct {
	m       *Manager
	ctx     context.Context
	byOwner map[int64][2]string
}

func (h *holderCache) of(w *models.Workbench) Holder {
	ug, ok := h.byOwner[w.OwnerID]
	if !ok {
		if u, err := h.m.store.UserByID(h.ctx, w.OwnerID); err == nil {
			ug[0] = u.Username
		}
		if gs, err := h.m.store.UserGroups(h.ctx, w.OwnerID); err == nil {
			sort.Strings(gs)
			ug[1] = strings.Join(gs, ",")
		}
		h.byOwner[w.OwnerID] = ug
	}
	return Holder{WorkbenchID: w.ID, User: ug[0], Group: ug[1]}
}
