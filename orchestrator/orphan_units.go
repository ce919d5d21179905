package orchestrator

import (
	"context"
	"strings"
	"time"

	"workbench/models"
	"workbench/orchestrator/gpu"
	"workbench/orchestrator/runtime"
	"workbench/orchestrator/scheduler"
)

// A container of this install that no workbench record names (an orphan)
// is removed by reconciliation once older than OrphanGrace. Until then it
// may well run on GPUs: a restored backup does not know the workbenches
// launched after it was taken, and their containers still run. Their
// units are recorded as taken (models.OrphanUnit) so that no launch is
// given a GPU in use, and the pool pages say who holds them; the sweep
// that removes the container frees them.

// UnknownHolder is a container the portal does not know that holds a GPU
// or a unit of one, and when the orphan sweep removes it.
type UnknownHolder struct {
	Name     string    `json:"name"`
	RemoveAt time.Time `json:"remove_at"`
}

func unknownHolder(o models.OrphanUnit) *UnknownHolder {
	return &UnknownHolder{Name: o.Container, RemoveAt: o.RemoveAt}
}

// orphanHold is what the orphan container c holds, from the GPU label the
// portal put on it (labelGPUs: its device ids), read against the
// inventory (devs, states).
func (m *Manager) orphanHold(c runtime.ContainerInfo, devs []gpu.Device, states map[string]models.GPUState) models.OrphanHold {
	h := models.OrphanHold{ContainerID: c.ID, Container: strings.TrimPrefix(c.Name, "/"), RemoveAt: c.Created.Add(m.opt.OrphanGrace)}
	for _, id := range strings.Split(c.Labels[labelGPUs], ",") {
		if u, ok := unitOfDevice(id, devs, states); ok {
			h.Units = append(h.Units, u)
		}
	}
	return h
}

// unitOfDevice is the unit a device id of a container's device request
// names: a MIG instance by its UUID; a GPU's UUID is one slice of it when
// it is shared, else the whole GPU (createContainer names a slice by its
// GPU). false: no such device here.
func unitOfDevice(id string, devs []gpu.Device, states map[string]models.GPUState) (models.Unit, bool) {
	if id == "" {
		return models.Unit{}, false
	}
	for _, d := range devs {
		for _, mi := range d.MIG {
			if d.MIGEnabled && mi.UUID == id {
				return models.Unit{Kind: models.UnitMIG, UUID: mi.UUID, Profile: mi.Profile, GPUUUID: d.UUID, Model: d.Model}, true
			}
		}
		if d.UUID != id {
			continue
		}
		if !d.MIGEnabled && states[d.UUID].SharedSlices > 0 {
			return models.Unit{Kind: models.UnitSlice, UUID: d.UUID, GPUUUID: d.UUID, Model: d.Model}, true
		}
		return models.Unit{Kind: models.UnitGPU, UUID: d.UUID, GPUUUID: d.UUID, Model: d.Model}, true
	}
	return models.Unit{}, false
}

// holdOrphans records the units the orphans found by this reconciliation
// hold (and frees those of the orphans gone since); when some were freed,
// the queue may place what waited for them.
func (m *Manager) holdOrphans(ctx context.Context, orphans []runtime.ContainerInfo) {
	holds := make([]models.OrphanHold, 0, len(orphans))
	var devs []gpu.Device
	var states map[string]models.GPUState
	for _, c := range orphans {
		if c.Labels[labelGPUs] == "" {
			continue
		}
		if devs == nil {
			var err error
			if devs, states, err = m.pool.readInventory(ctx); err != nil {
				m.log.Warn("reconcile: orphans' GPUs", "err", err)
				return // the next pass tries again; nothing is freed meanwhile
			}
		}
		holds = append(holds, m.orphanHold(c, devs, states))
	}
	freed, err := m.store.SetOrphanUnits(ctx, holds)
	if err != nil {
		m.log.Warn("reconcile: record orphans' GPUs", "err", err)
		return
	}
	if freed > 0 {
		m.log.Info("reconcile: units of removed orphans freed", "units", freed)
		m.kickDrain()
	}
}

// orphanReleases are the orphan units as the scheduler sees them: each one
// unit of the pool whose candidates it is among (needs, read from the
// inventory: whole GPUs and slices by their GPU, MIG instances by their own
// UUID), given back when the sweep removes its container. A unit no flavor
// may be given (on a drained GPU, of a model no flavor asks for) frees
// nothing a request could wait for: left out.
func orphanReleases(orphans []models.OrphanUnit, needs map[int64]models.GPUNeed) []scheduler.Orphan {
	if len(orphans) == 0 {
		return nil
	}
	pools := map[string]scheduler.Pool{} // kind|candidate → pool
	for _, n := range needs {
		for _, c := range n.Candidates {
			pools[n.Kind+"|"+c] = unitPool(n.Kind, n.Model, n.Profile)
		}
	}
	var out []scheduler.Orphan
	for _, o := range orphans {
		id := o.GPUUUID
		if o.Kind == models.UnitMIG {
			id = o.UnitID
		}
		if p, ok := pools[o.Kind+"|"+id]; ok {
			out = append(out, scheduler.Orphan{Pool: p, Units: 1, RemoveAt: o.RemoveAt})
		}
	}
	return out
}
