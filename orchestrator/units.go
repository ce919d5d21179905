package orchestrator

import (
	"context"
	"fmt"

	"workbench/models"
	"workbench/orchestrator/gpu"
)

// Pool states of a GPU handed out in units rather than whole.
const (
	GPUMIG    = "mig"    // MIG enabled: handed out by instance
	GPUShared = "shared" // shared by an admin: handed out by slice
)

// Environment variables of NVIDIA MPS a slice's container gets when the
// admin set limits on its shared GPU (docs/gpu-units.md).
const (
	EnvMPSMemLimit     = "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"
	EnvMPSThreadPct    = "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"
	EnvWorkbenchShared = "WORKBENCH_GPU_SHARED"
)

// PoolUnit is one unit a GPU is handed out in (a MIG instance or a slice)
// and the workbench holding it ("" when free).
type PoolUnit struct {
	Kind        string `json:"kind"` // models.UnitMIG or models.UnitSlice
	UUID        string `json:"uuid"` // MIG UUID; the GPU's UUID for a slice
	Profile     string `json:"profile,omitempty"`
	Slice       *int   `json:"slice,omitempty"`
	WorkbenchID string `json:"workbench_id"`
	// Unknown is the container no workbench record names that holds the
	// unit (a restored backup's orphan), until the orphan sweep removes it.
	Unknown *UnknownHolder `json:"unknown_container,omitempty"`
	// Reading is a MIG instance's own latest reading (nil where there is
	// none: no MIG device handles, or a slice, whose figures are per
	// holder process and need the manager's attribution: /metrics).
	Reading *UnitReading `json:"reading,omitempty"`
}

// UnitReading is a MIG instance's own latest reading. A figure that could
// not be read is absent (null), never 0.
type UnitReading struct {
	MemUsedMiB  *uint64 `json:"memory_used_mib"`
	MemFreeMiB  *uint64 `json:"memory_free_mib"`
	UtilPercent *uint32 `json:"gpu_percent"`
}

// migReadings attaches each MIG instance's own reading from the GPU's
// latest sample.
func migReadings(units []PoolUnit, s gpu.Sample) {
	for i := range units {
		for _, m := range s.MIG {
			if units[i].Kind != models.UnitMIG || m.UUID != units[i].UUID {
				continue
			}
			r := &UnitReading{}
			if m.Readable(gpu.FieldMemory) {
				used, free := m.MemUsedMiB, m.MemFreeMiB
				r.MemUsedMiB, r.MemFreeMiB = &used, &free
			}
			if m.Readable(gpu.FieldUtil) {
				u := m.UtilPercent
				r.UtilPercent = &u
			}
			units[i].Reading = r
		}
	}
}

// Need is what a flavor asks of the pool, by unit kind: whole GPUs of its
// model (healthy, undrained, neither MIG-enabled nor shared), MIG instances
// of its profile on healthy, undrained MIG GPUs of its model, or a slice of
// a healthy, undrained shared GPU of its model. Allocation (in the database
// transaction) skips units already held and re-reads which GPUs are shared.
func (p *Pool) Need(ctx context.Context, f *models.Flavor) (models.GPUNeed, error) {
	if f.GPUCount == 0 {
		return needFrom(nil, nil, f), nil
	}
	devs, states, err := p.readInventory(ctx)
	if err != nil {
		return models.GPUNeed{}, err
	}
	need := needFrom(devs, states, f)
	preferUnused(&need, p.withProcesses(devs))
	return need, nil
}

// Needs is Need for each flavor (by id) over one read of the inventory:
// what the queue's drainer places from.
func (p *Pool) Needs(ctx context.Context, fls []models.Flavor) (map[int64]models.GPUNeed, error) {
	devs, states, err := p.readInventory(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]models.GPUNeed, len(fls))
	used := p.withProcesses(devs)
	for i := range fls {
		need := needFrom(devs, states, &fls[i])
		preferUnused(&need, used)
		out[fls[i].ID] = need
	}
	return out, nil
}

func (p *Pool) readInventory(ctx context.Context) ([]gpu.Device, map[string]models.GPUState, error) {
	devs, err := p.inv.Devices(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("read GPU inventory: %w", err)
	}
	states, err := p.store.GPUStates(ctx)
	if err != nil {
		return nil, nil, err
	}
	return devs, states, nil
}

func needFrom(devs []gpu.Device, states map[string]models.GPUState, f *models.Flavor) models.GPUNeed {
	need := models.GPUNeed{Kind: f.UnitKind, Model: f.GPUModel, Profile: f.MIGProfile, Count: f.GPUCount}
	if need.Kind == "" {
		need.Kind = models.UnitGPU
	}
	if f.GPUCount == 0 {
		return need
	}
	for _, d := range devs {
		st := states[d.UUID]
		if d.Model != f.GPUModel {
			continue
		}
		// Structural counts the layout, drained and unhealthy GPUs too
		// (they come back); the candidates only what is in service.
		inService := d.Health == gpu.HealthOK && !st.Drained
		switch need.Kind {
		case models.UnitGPU:
			if d.MIGEnabled {
				continue // never whole: the portal does not repartition
			}
			need.Structural++
			switch {
			case !inService:
			case st.SharedSlices == 0:
				need.Candidates = append(need.Candidates, d.UUID)
			default:
				// Only to a queued launch that claimed it, once its slice
				// holders have yielded (docs/scheduling.md).
				need.Lend = append(need.Lend, d.UUID)
			}
		case models.UnitSlice:
			if d.MIGEnabled || st.SharedSlices == 0 {
				continue
			}
			need.Structural += st.SharedSlices
			if inService {
				need.Candidates = append(need.Candidates, d.UUID)
			}
		case models.UnitMIG:
			for _, mi := range d.MIG {
				if !d.MIGEnabled || mi.Profile != f.MIGProfile {
					continue
				}
				need.Structural++
				if !inService {
					continue
				}
				if need.Parents == nil {
					need.Parents = map[string]string{}
				}
				need.Candidates = append(need.Candidates, mi.UUID)
				need.Parents[mi.UUID] = d.UUID
			}
		}
	}
	return need
}

// UnitEnv is the environment a container gets for its units: a slice is
// told it shares its GPU and, where the admin set MPS limits on that GPU,
// gets them (they only bind where the host runs the MPS control daemon).
func (p *Pool) UnitEnv(ctx context.Context, units []models.Unit) []string {
	var out []string
	for _, u := range units {
		if u.Kind != models.UnitSlice {
			continue
		}
		out = append(out, EnvWorkbenchShared+"=1")
		states, err := p.store.GPUStates(ctx)
		if err != nil {
			return out // limits are optional; the slice still runs
		}
		st := states[u.GPUUUID]
		if st.MPSMemoryMiB > 0 {
			// Device 0: the container sees only its shared GPU.
			out = append(out, fmt.Sprintf("%s=0=%dM", EnvMPSMemLimit, st.MPSMemoryMiB))
		}
		if st.MPSThreadPercent > 0 {
			out = append(out, fmt.Sprintf("%s=%d", EnvMPSThreadPct, st.MPSThreadPercent))
		}
		break
	}
	return out
}

// poolUnits lists the units of one GPU with their holders: its MIG
// instances, or its slices when shared.
func poolUnits(d gpu.Device, st models.GPUState, held map[string]string) []PoolUnit {
	var out []PoolUnit
	if d.MIGEnabled {
		for _, mi := range d.MIG {
			out = append(out, PoolUnit{Kind: models.UnitMIG, UUID: mi.UUID, Profile: mi.Profile, WorkbenchID: held[mi.UUID]})
		}
		return out
	}
	for k := 0; k < st.SharedSlices; k++ {
		k := k
		out = append(out, PoolUnit{Kind: models.UnitSlice, UUID: d.UUID, Slice: &k, WorkbenchID: held[models.SliceUnitID(d.UUID, k)]})
	}
	return out
}

// unitHolders maps each bound MIG UUID and slice ("<GPU>/slice/<k>") to its
// workbench, and each shared GPU with a slice held beyond its current
// count (an admin lowered it) to that holder too.
func unitHolders(list []models.UnitHolder) map[string]string {
	out := map[string]string{}
	for _, h := range list {
		switch h.Kind {
		case models.UnitMIG:
			out[h.UUID] = h.WorkbenchID
		case models.UnitSlice:
			out[models.SliceUnitID(h.GPUUUID, *h.Slice)] = h.WorkbenchID
		}
	}
	return out
}

// FreeUnits counts the units of g nobody holds.
func (g PoolGPU) FreeUnits() int {
	n := 0
	for _, u := range g.Units {
		if u.Free() {
			n++
		}
	}
	return n
}

// Free reports whether nobody holds u: no workbench, and no container the
// portal does not know.
func (u PoolUnit) Free() bool { return u.WorkbenchID == "" && u.Unknown == nil }

// unitID is u's key in the allocations: the MIG UUID, or "<GPU>/slice/<k>".
func (u PoolUnit) unitID() string {
	if u.Kind == models.UnitSlice && u.Slice != nil {
		return models.SliceUnitID(u.UUID, *u.Slice)
	}
	return u.UUID
}

// SetShared shares a GPU in slices (0: whole again) with optional MPS
// limits, and audits who did it. A MIG-enabled GPU cannot be shared (its
// instances are its units); the store refuses what would break a binding.
func (p *Pool) SetShared(ctx context.Context, uuid string, c models.SharedSetting, actor string) error {
	devs, err := p.inv.Devices(ctx)
	if err != nil {
		return err
	}
	var dev *gpu.Device
	for i := range devs {
		if devs[i].UUID == uuid {
			dev = &devs[i]
		}
	}
	if dev == nil {
		return models.ErrNotFound
	}
	if dev.MIGEnabled && c.Slices > 0 {
		return &models.ValidationError{Field: "slices", Message: reasonf("this GPU has MIG enabled: its MIG instances are its units, it cannot also be shared in slices")}
	}
	// The sharing, its slice price and the audit row commit together.
	return audited(ctx, p.store, actor, func(tx *models.Store) (models.AuditRecord, error) {
		before, err := tx.SetGPUShared(ctx, uuid, c, actor)
		if err != nil {
			return models.AuditRecord{}, err
		}
		if c.Slices > 0 {
			if err := tx.SeedUnitPrice(ctx, models.UnitSlice, dev.Model, dev.Model); err != nil {
				return models.AuditRecord{}, err
			}
		}
		return models.AuditRecord{Action: "gpu.share", Target: uuid, Before: before, After: c}, nil
	})
}

// Capacity is how many units of a kind the pool can offer (healthy,
// undrained): whole GPUs of a model that are neither MIG-enabled nor
// shared, MIG instances of a profile on GPUs of a model, or the slices of
// the shared GPUs of a model. Reservations are booked against it.
func (p *Pool) Capacity(ctx context.Context, kind, model, profile string) (int, error) {
	devs, states, err := p.readInventory(ctx)
	if err != nil {
		return 0, err
	}
	need := needFrom(devs, states, &models.Flavor{GPUModel: model, GPUCount: 1, UnitKind: kind, MIGProfile: profile})
	if need.Kind != models.UnitSlice {
		return len(need.Candidates), nil
	}
	n := 0
	for _, uuid := range need.Candidates {
		n += states[uuid].SharedSlices
	}
	return n, nil
}
